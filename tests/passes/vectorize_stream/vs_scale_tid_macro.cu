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
    for (int i = tid; i < n; i += gridDim.x * blockDim.x)
        dst[i] = fmaf(a, src[i], b);
}
