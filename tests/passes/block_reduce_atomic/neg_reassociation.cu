// RUN: kltrans opt -p 'block-reduce-atomic'
// CHECK-SKIP: reassociation: float addition is not associative
// A float sum without --assume reassoc: the tree order would round differently.
// kltrans: launch reduce_sum_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum_naive(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i]);
    }
}
