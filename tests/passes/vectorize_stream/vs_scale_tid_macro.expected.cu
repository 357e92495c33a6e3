// RUN: kltrans opt -p 'vectorize-stream{flag=aligned,xv=in4,yv=out4,nv=n4,t=v,o=r,unroll=2,div=div}' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// A named tid (threadIdx.x + blockDim.x * blockIdx.x), a gridDim.x * blockDim.x stride, the
// modulo spelling of the flag and pointers offset by a multiple of the length: two
// vectors in flight per thread, the count written n / 4.
// kltrans: launch scale grid=ceil_div(n, 2048) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = threadIdx.x + blockDim.x * blockIdx.x;
    const float* src = x + 0 * n;
    float* dst = y + 0 * n;
    const bool aligned = n % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(y) % 16 == 0;
    if (aligned) {
        const float4* in4 = reinterpret_cast<const float4*>(src);
        float4* out4 = reinterpret_cast<float4*>(dst);
        const int n4 = n / 4;
        int i = tid;
        for (; i + (2 - 1) * (gridDim.x * blockDim.x) < n4; i += 2 * (gridDim.x * blockDim.x)) {
            float4 v[2];
            for (int u = 0; u < 2; ++u) {
                v[u] = in4[i + u * (gridDim.x * blockDim.x)];
            }
            for (int u = 0; u < 2; ++u) {
                float4 r;
                r.x = fmaf(a, v[u].x, b);
                r.y = fmaf(a, v[u].y, b);
                r.z = fmaf(a, v[u].z, b);
                r.w = fmaf(a, v[u].w, b);
                out4[i + u * (gridDim.x * blockDim.x)] = r;
            }
        }
        for (; i < n4; i += (gridDim.x * blockDim.x)) {
            const float4 v = in4[i];
            float4 r;
            r.x = fmaf(a, v.x, b);
            r.y = fmaf(a, v.y, b);
            r.z = fmaf(a, v.z, b);
            r.w = fmaf(a, v.w, b);
            out4[i] = r;
        }
    } else {
        for (int i = tid; i < n; i += gridDim.x * blockDim.x)
            dst[i] = fmaf(a, src[i], b);
    }
}
