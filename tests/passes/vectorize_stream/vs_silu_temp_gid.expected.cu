// RUN: kltrans opt -p 'vectorize-stream{flag=can_vec,nv=n_vec,suffix=_v,div=div}'
// GATE: tests/data/workloads/vectorize_stream_silu
// A named gid and stride, three statements (two const temporaries, then the store), a
// flag written by hand in the uintptr_t spelling, the vector count written n / 4 and the
// vector pointers named x_v / y_v (suffix=_v).
// kltrans: launch silu grid=min(ceil_div(n, 128), 2048) block=128
#include <stdint.h>

extern "C" __global__ void silu(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    const bool can_vec = n % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(y) % 16 == 0;
    if (can_vec) {
        const float4* x_v = reinterpret_cast<const float4*>(x);
        float4* y_v = reinterpret_cast<float4*>(y);
        const int n_vec = n / 4;
        int i = gid;
        for (; i < n_vec; i += stride) {
            const float4 x4 = x_v[i];
            float4 y4;
            {
                const float v = x4.x;
                const float sig = 1.0f / (1.0f + expf(-v));
                y4.x = v * sig;
            }
            {
                const float v = x4.y;
                const float sig = 1.0f / (1.0f + expf(-v));
                y4.y = v * sig;
            }
            {
                const float v = x4.z;
                const float sig = 1.0f / (1.0f + expf(-v));
                y4.z = v * sig;
            }
            {
                const float v = x4.w;
                const float sig = 1.0f / (1.0f + expf(-v));
                y4.w = v * sig;
            }
            y_v[i] = y4;
        }
    } else {
        for (int i = gid; i < n; i += stride) {
            const float v = x[i];
            const float sig = 1.0f / (1.0f + expf(-v));
            y[i] = v * sig;
        }
    }
}
