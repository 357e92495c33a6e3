// RUN: kltrans opt -p 'drop-l2-prefetch'
// CHECK-SKIP: prefetch-only: the #if block does more than compute a local address and prefetch (an assignment, a barrier or an else branch)
// The sm_90 block also counts blocks: removing it would change a result.
// kltrans: launch copy grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void copy(const float* x, float* y, int n, int* seen)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
    if (threadIdx.x == 0) {
        const size_t ahead = ((size_t)blockIdx.x + 8) * blockDim.x;
        seen[blockIdx.x] = 1;
        if (ahead + blockDim.x <= n) {
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                         :: "l"(x + ahead), "r"((unsigned int)(blockDim.x * sizeof(float))) : "memory");
        }
    }
#endif
    if (i < n) y[i] = x[i];
}
