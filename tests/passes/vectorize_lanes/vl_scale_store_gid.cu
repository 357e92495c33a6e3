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
    for (int j = 0; j < 4; j++) {
        r[j] = base + j < n ? x[base + j] : 0.0f;
    }
    for (int j = 0; j < 4; j++) {
        if (base + j < n) {
            y[base + j] = a * r[j] + b;
        }
    }
}
