// RUN: kltrans opt -p 'unchunk-loop'
// GATE: corpus/reduce-sum
// ROUNDTRIP: model: chunk-loop writes its own tail (`int j = ...; if (j < n)`, any thread of the grid) where this one gives the leftover to the last block
// A capped sum whose grid-stride loop reads pairs through float2 views into a register, then
// a guarded tail: the leftover element (n odd) is added by thread 0 of the grid's last block,
// its index written inline. The chunk stores nothing (the sum stays in a register until the
// block's atomics), so the kernel is compared whole on the grid machine, merged and not.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 2 * 256), 64) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    int half = n >> 1;
    const float2* x2 = reinterpret_cast<const float2*>(x);
    float acc = 0.0f;
    for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < half; k += gridDim.x * blockDim.x) {
        float2 p = x2[k];
        acc += p.x + p.y;
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n - 2 * half) {
        acc += x[2 * half + threadIdx.x];
    }
    atomicAdd(out, acc);
}
