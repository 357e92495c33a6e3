// RUN: kltrans opt -p grid-accumulate --assume reassoc
// CHECK-SKIP: one-thread-per-element: is not one thread per element
// The grid is already capped: a thread past the cap would never load its element.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 64) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    atomicAdd(out, v);
}
