// RUN: kltrans opt -p grid-accumulate --assume reassoc
// CHECK-SKIP: same-results
// Each thread's value is squared after the load: a thread that sums several elements
// first would square their sum, not add their squares. The grid machine, at a grid of 2
// blocks, sees the fold differ.
// kltrans: launch sum_squares grid=ceil_div(n, 256) block=256
extern "C" __global__ void sum_squares(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    if (i < n) atomicAdd(out, v * v);
}
