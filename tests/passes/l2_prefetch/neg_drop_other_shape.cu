// RUN: kltrans opt -p 'drop-l2-prefetch'
// CHECK-SKIP: restorable: not the guarded form `if (threadIdx.x == 0) { const T ahead = ...; if (ahead + len <= limit) asm volatile(...prefetch...); }`
// Every warp's lane 0 prefetches (threadIdx.x % 32): not a form l2-prefetch writes.
// kltrans: launch copy grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void copy(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
    if (threadIdx.x % 32 == 0) {
        const size_t ahead = ((size_t)blockIdx.x + 8) * blockDim.x + threadIdx.x;
        if (ahead + 32 <= n) {
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                         :: "l"(x + ahead), "r"((unsigned int)(32 * sizeof(float))) : "memory");
        }
    }
#endif
    if (i < n) y[i] = x[i];
}
