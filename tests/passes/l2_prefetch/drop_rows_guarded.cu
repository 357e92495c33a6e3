// RUN: kltrans opt -p 'drop-l2-prefetch'
// Rows of a matrix, rpb rows per block, prefetched under a vec_ok guard that tests the
// row length and the alignment (the layernorm expert's shape).
// kltrans: launch row_scale grid=ceil_div(rows, 4) block=128
#include <cuda_fp16.h>
#include <stdint.h>
#define PF 66

extern "C" __global__ void row_scale(const __half* x, __half* y, int rows, int cols)
{
    const int rpb = 4;
    const bool vec_ok = (cols & 7) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
    if (threadIdx.x == 0 && vec_ok) {
        const long long ahead = ((long long)blockIdx.x + PF) * rpb;
        if (ahead + rpb <= rows) {
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                         :: "l"(x + (size_t)ahead * (size_t)cols),
                            "r"((unsigned int)(rpb * cols * sizeof(__half))) : "memory");
        }
    }
#endif
    for (int r = 0; r < rpb; ++r) {
        const long long row = (long long)blockIdx.x * rpb + r;
        if (row >= rows) return;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            y[row * cols + c] = __hmul(x[row * cols + c], __float2half(2.0f));
        }
    }
}
