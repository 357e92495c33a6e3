// RUN: kltrans opt -p 'drop-stream-hints' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// Hints inside a device helper called from a grid-stride loop go like those of a kernel;
// the round trip (stream-hints{load=ldcs,store=stcs}) hints the helper's accesses again,
// since its only caller passes the kernel's x and y.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#define BLOCK 256

__device__ __forceinline__ float affine1(const float* p, int k, float a, float b)
{
    return a * __ldcs(p + k) + b;
}

__device__ __forceinline__ void put1(float* q, int k, float v)
{
    __stcs(q + k, v);
}

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int gid = blockIdx.x * BLOCK + threadIdx.x;
    for (int k = gid; k < n; k += BLOCK * gridDim.x) {
        put1(y, k, affine1(x, k, a, b));
    }
}
