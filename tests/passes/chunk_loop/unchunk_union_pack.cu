// RUN: kltrans opt -p 'unchunk-loop'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: chunk-loop writes float4 lanes, not a union of a vector and an array
// Chunks of four move through a union of a float4 and a float[4] (one 16-byte access, the
// math on the array), loaded and stored by helpers: the model reads the union's members as
// the same four lanes, so each chunk stores what four scalar bodies store. The loop then
// walks elements; the chunk count, the helpers and the union, read by nothing else, go.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 128), 264) block=128
union Quad
{
    float4 vec;
    float lane[4];
};

__device__ inline Quad fetch_quad(const float* src, int q)
{
    Quad out;
    out.vec = reinterpret_cast<const float4*>(src)[q];
    return out;
}

__device__ inline void put_quad(float* dst, int q, const Quad& in)
{
    reinterpret_cast<float4*>(dst)[q] = in.vec;
}

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    const int quads = n / 4;
    for (int q = t; q < quads; q += blockDim.x * gridDim.x) {
        Quad r = fetch_quad(x, q);
        // ok: chunk-form: not a grid-stride loop (c steps by 1)
        for (int c = 0; c < 4; c++)
            r.lane[c] = a * r.lane[c] + b;
        put_quad(y, q, r);
    }
    int rest = 4 * quads + t;
    if (rest < n)
        y[rest] = a * x[rest] + b;
}
