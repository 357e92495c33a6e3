// RUN: kltrans opt -p 'atomic-per-thread' --assume reassoc
// GATE: corpus/reduce-sum
// The block that block-reduce-atomic{shuffle=down} writes on the reduce-sum naive kernel:
// atomic-per-thread gives the guarded per-thread atomicAdd back.
// kltrans: launch reduce_sum_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum_naive(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i]);
    }
}
