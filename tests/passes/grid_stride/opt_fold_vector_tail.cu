// RUN: kltrans opt -p 'one-per-thread'
// GATE: corpus/reduce-sum
// ROUNDTRIP: none: grid-stride writes one element per iteration, not the float4 chunks (the walk compares the two over the whole grid)
// float4 chunks over a grid-stride loop and the last n % 4 elements by the first threads of
// block 0: every element is added once over the grid.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 4 * 128), 32) block=128
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int n4 = n / 4;
    float acc = 0.0f;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < n4; c += blockDim.x * gridDim.x) {
        float4 q = reinterpret_cast<const float4*>(x)[c];
        acc += (q.x + q.y) + (q.z + q.w);
    }
    if (blockIdx.x == 0 && threadIdx.x < n - 4 * n4) {
        acc += x[4 * n4 + threadIdx.x];
    }
    atomicAdd(out, acc);
}
