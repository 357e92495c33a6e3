// RUN: kltrans opt -p 'unrestrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// A device helper's restricted parameters lose __restrict__ like a kernel's (the shared
// scratch pointer `s` too), and so do the kernel's; restrict-pointers restricts them all again.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#define BLOCK 256

__device__ __forceinline__ void stage_scale(const float* src, float* dst,
                                            float* s, int i, int n, float a, float b)
{
    s[threadIdx.x] = i < n ? src[i] : 0.0f;
    __syncthreads();
    if (i < n) {
        dst[i] = a * s[threadIdx.x] + b;
    }
}

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    __shared__ float buf[BLOCK];
    stage_scale(x, y, buf, blockIdx.x * BLOCK + threadIdx.x, n, a, b);
}
