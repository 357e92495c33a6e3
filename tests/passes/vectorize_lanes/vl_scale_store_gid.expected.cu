// RUN: kltrans opt -p 'vectorize-lanes{flag=aligned4,temp=out,load=ldg,fill=each}' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// Four elements per thread, the global index spelled threadIdx.x + blockDim.x * blockIdx.x;
// the lane loads (int ++ style: j++) and the lane stores both get a vector path.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>
#define VEC 4

__global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int gid = threadIdx.x + blockDim.x * blockIdx.x;
    const int base = gid * VEC;
    const bool aligned4 = n % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                          reinterpret_cast<uintptr_t>(y) % 16 == 0;
    float r[VEC];
    if (aligned4) {
        if (base < n) {
            const float4 out = __ldg(reinterpret_cast<const float4*>(x + base));
            r[0] = out.x;
            r[1] = out.y;
            r[2] = out.z;
            r[3] = out.w;
        } else {
            r[0] = 0.0f;
            r[1] = 0.0f;
            r[2] = 0.0f;
            r[3] = 0.0f;
        }
    } else {
        for (int j = 0; j < 4; j++) {
            r[j] = base + j < n ? x[base + j] : 0.0f;
        }
    }
    if (aligned4) {
        if (base < n) {
            float4 out;
            out.x = a * r[0] + b;
            out.y = a * r[1] + b;
            out.z = a * r[2] + b;
            out.w = a * r[3] + b;
            *reinterpret_cast<float4*>(y + base) = out;
        }
    } else {
        for (int j = 0; j < 4; j++) {
            if (base + j < n) {
                y[base + j] = a * r[j] + b;
            }
        }
    }
}
