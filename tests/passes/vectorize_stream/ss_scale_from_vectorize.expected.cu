// RUN: kltrans opt -p 'scalarize-stream' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// The shape vectorize-stream{flag=aligned,xv=in4,yv=out4,nv=n4,t=v,o=r,unroll=2,div=div}
// writes: the vector path is dropped, the grid-strided scalar loop stays.
// kltrans: launch scale grid=ceil_div(n, 2048) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = threadIdx.x + blockDim.x * blockIdx.x;
    const float* src = x + 0 * n;
    float* dst = y + 0 * n;
    const bool aligned = n % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(y) % 16 == 0;
    for (int i = tid; i < n; i += gridDim.x * blockDim.x)
        dst[i] = fmaf(a, src[i], b);
}
