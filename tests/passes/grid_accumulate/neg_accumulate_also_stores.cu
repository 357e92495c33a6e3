// RUN: kltrans opt -p grid-accumulate --assume reassoc
// CHECK-SKIP: grid-fold: also stores
// Each thread also writes its element out: the kernel is not only a fold.
// kltrans: launch copy_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void copy_sum(const float* x, float* y, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    if (i < n) y[i] = v;
    atomicAdd(out, v);
}
