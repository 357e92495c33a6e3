// RUN: kltrans opt -p 'block-reduce-atomic' --assume reassoc
// GATE: corpus/reduce-sum
// The reduce-sum naive kernel: every thread adds its element to *out. The guarded atomic
// becomes a value that is 0.0f past the end, reduced over the block; thread 0 adds the
// block's sum. A float sum is reassociated: the workload's tolerance allows it.
// kltrans: launch reduce_sum_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum_naive(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i]);
    }
}
