// RUN: kltrans opt -p 'drop-l2-prefetch'
// GATE: tests/data/workloads/copy
// A tiled copy with the expert's prefetch shape (tile offset, run-time alignment test);
// the prefetch goes, the copy stays.
// kltrans: launch copy grid=ceil_div(n, 4096) block=256
#include <stdint.h>
#define TILE 4096
#define AHEAD 64

extern "C" __global__ void copy(const float* x, float* y, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tile_base = (size_t)blockIdx.x * TILE;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
    if (threadIdx.x == 0) {
        const size_t ahead = tile_base + (size_t)AHEAD * TILE;
        if (ahead + TILE <= count && ((uintptr_t)x & 15u) == 0) {
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                         :: "l"(x + ahead), "r"((unsigned int)(TILE * sizeof(float))) : "memory");
        }
    }
#endif
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) {
        const size_t i = tile_base + k;
        if (i < count) y[i] = x[i];
    }
}
