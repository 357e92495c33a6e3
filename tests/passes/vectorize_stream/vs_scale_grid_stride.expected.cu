// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// A grid-stride loop (index spelled blockIdx.x * blockDim.x + threadIdx.x) gets a float4
// path behind the kernel's own flag; one vector per iteration (unroll 1).
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    if (vec_ok) {
        const float4* xv = reinterpret_cast<const float4*>(x);
        float4* yv = reinterpret_cast<float4*>(y);
        const int nv = n >> 2;
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        for (; i < nv; i += (blockDim.x * gridDim.x)) {
            const float4 t = xv[i];
            float4 o;
            o.x = a * t.x + b;
            o.y = a * t.y + b;
            o.z = a * t.z + b;
            o.w = a * t.w + b;
            yv[i] = o;
        }
    } else {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            y[i] = a * x[i] + b;
        }
    }
}
