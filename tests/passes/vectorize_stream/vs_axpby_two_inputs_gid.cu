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
    for (size_t i = gid; i < n; i += (size_t)blockDim.x * gridDim.x) {
        const float xi = x[i];
        const float yi = y[i];
        z[i] = fmaf(a, xi, b * yi);
    }
}
