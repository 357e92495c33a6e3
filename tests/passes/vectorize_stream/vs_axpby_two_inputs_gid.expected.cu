// RUN: kltrans opt -p 'vectorize-stream{flag=aligned}'
// GATE: tests/data/workloads/vectorize_stream_axpby
// Two const temporaries from two inputs, a named gid in a size_t loop, fmaf in the store,
// and a flag testing the length with a mask and the three pointers' alignment OR-ed
// together (one spelling public kernels use).
// kltrans: launch axpby grid=min(ceil_div(n, 512), 4096) block=512
#include <stdint.h>

extern "C" __global__ void axpby(const float* __restrict__ x, const float* __restrict__ y,
                                 float* __restrict__ z, float a, float b, int n)
{
    const size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool aligned = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y | (uintptr_t)z) & 15) == 0;
    if (aligned) {
        const float4* x_vec = reinterpret_cast<const float4*>(x);
        const float4* y_vec = reinterpret_cast<const float4*>(y);
        float4* z_vec = reinterpret_cast<float4*>(z);
        const size_t nv = n >> 2;
        size_t i = gid;
        for (; i < nv; i += ((size_t)blockDim.x * gridDim.x)) {
            const float4 x4 = x_vec[i];
            const float4 y4 = y_vec[i];
            float4 z4;
            {
                const float xi = x4.x;
                const float yi = y4.x;
                z4.x = fmaf(a, xi, b * yi);
            }
            {
                const float xi = x4.y;
                const float yi = y4.y;
                z4.y = fmaf(a, xi, b * yi);
            }
            {
                const float xi = x4.z;
                const float yi = y4.z;
                z4.z = fmaf(a, xi, b * yi);
            }
            {
                const float xi = x4.w;
                const float yi = y4.w;
                z4.w = fmaf(a, xi, b * yi);
            }
            z_vec[i] = z4;
        }
    } else {
        for (size_t i = gid; i < n; i += (size_t)blockDim.x * gridDim.x) {
            const float xi = x[i];
            const float yi = y[i];
            z[i] = fmaf(a, xi, b * yi);
        }
    }
}
