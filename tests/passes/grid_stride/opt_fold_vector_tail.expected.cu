// RUN: kltrans opt -p 'one-per-thread'
// GATE: corpus/reduce-sum
// ROUNDTRIP: none: grid-stride writes one element per iteration, not the float4 chunks (the walk compares the two over the whole grid)
// float4 chunks over a grid-stride loop and the last n % 4 elements by the first threads of
// block 0: every element is added once over the grid.
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
