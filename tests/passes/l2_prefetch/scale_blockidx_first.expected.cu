// RUN: kltrans opt -p 'l2-prefetch{ahead=8}'
// GATE: tests/data/workloads/scale
// The element-per-thread idiom: block b streams x[b * 256 .. b * 256 + 256); thread 0
// asks for the range eight blocks later (1 KiB, a multiple of 16 bytes).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
  if (threadIdx.x == 0) {
      const size_t ahead = ((size_t)blockIdx.x + 8) * blockDim.x;
      if (ahead + blockDim.x <= n && ((uintptr_t)x & 15u) == 0) {
          asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                       :: "l"(x + ahead), "r"((unsigned int)(blockDim.x * sizeof(float))) : "memory");
      }
  }
#endif
  if (i < n) {
    y[i] = a * x[i] + b;
  }
}
