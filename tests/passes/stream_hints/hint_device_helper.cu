// RUN: kltrans opt -p 'stream-hints{load=ldg}' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// The element work lives in a device helper. Its only call passes the kernel's x and y,
// so src and dst are global memory: the load takes __ldg, the store __stcs.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
__device__ __forceinline__ void scale_at(const float* src, float* dst, int i, float a, float b)
{
    dst[i] = a * src[i] + b;
}

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < n) {
        scale_at(x, y, i, a, b);
    }
}
