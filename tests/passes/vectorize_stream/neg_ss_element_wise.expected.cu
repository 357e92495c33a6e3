// RUN: kltrans opt -p 'scalarize-stream' --assume 'no_alias(*)'
// CHECK-SKIP: element-wise: `*bias` reads memory besides x[i]
// The value reads through a second pointer.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

extern "C" __global__ void scale_b(const float* x, float* y, const float* bias, float a, int n)
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
            o.x = a * t.x + *bias;
            o.y = a * t.y + *bias;
            o.z = a * t.z + *bias;
            o.w = a * t.w + *bias;
            yv[i] = o;
        }
    } else {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            y[i] = a * x[i] + *bias;
        }
    }
}
