// RUN: kltrans opt -p 'one-per-thread'
// GATE: corpus/reduce-sum
// ROUNDTRIP: none: grid-stride writes one element per iteration, not the pairs (the walk compares the two over the whole grid)
// The first add during the load, in registers: each thread folds pairs of elements a block
// apart from a capped grid sized for two elements per thread, the second guarded. Over
// the grid every element is added once: one element per thread, the grid uncapped.
// kltrans: launch reduce_sum grid=ceil_div(n, 128) block=128
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float acc = 0.0f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
