// RUN: kltrans opt -p 'l2-prefetch{ahead=32,itype="long long"}'
// GATE: tests/data/workloads/copy
// threadIdx-first spelling with a named gid, an early return and macros; the ahead index is a
// long long.
// kltrans: launch copy grid=ceil_div(n, 128) block=128
#include <cstdint>
#define BLOCK 128
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int gid = threadIdx.x + blockDim.x * blockIdx.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
    if (threadIdx.x == 0) {
        const long long ahead = ((long long)blockIdx.x + 32) * blockDim.x;
        if (ahead + blockDim.x <= n && ((uintptr_t)x & 15u) == 0) {
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                         :: "l"(x + ahead), "r"((unsigned int)(blockDim.x * sizeof(float))) : "memory");
        }
    }
#endif
    if (gid >= n) return;  // CEIL_DIV(n, BLOCK) blocks of BLOCK threads
    y[gid] = x[gid];
}
