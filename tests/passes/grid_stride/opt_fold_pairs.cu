// RUN: kltrans opt -p 'one-per-thread'
// GATE: corpus/reduce-sum
// ROUNDTRIP: none: grid-stride writes one element per iteration, not the pairs (the walk compares the two over the whole grid)
// The first add during the load, in registers: each thread folds pairs of elements a block
// apart from a capped grid sized for two elements per thread, the second guarded. Over
// the grid every element is added once: one element per thread, the grid uncapped.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 2 * 128), 64) block=128
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    unsigned int gridSize = blockDim.x * 2 * gridDim.x;
    float acc = 0.0f;
    while (i < n) {
        acc += x[i];
        if (i + blockDim.x < n)
            acc += x[i + blockDim.x];
        i += gridSize;
    }
    atomicAdd(out, acc);
}
