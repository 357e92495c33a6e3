// RUN: kltrans opt -p 'vectorize-units{flag=aligned}' --assume 'no_alias(*)'
// CHECK-SKIP: element-type: points to double, not a 4-byte int, unsigned or float
// Four doubles are 32 bytes: no single vector.
// kltrans: launch copy_units_f64 grid=ceil_div(n, BLOCK * UNITS * 4) block=BLOCK
#include <stdint.h>

#define BLOCK 256
#define UNITS 4

extern "C" __global__ void copy_units_f64(const double* x, double* y, int n)
{
    const int tid = threadIdx.x;
    const int base = blockIdx.x * (BLOCK * UNITS * 4);
    const bool aligned = base + BLOCK * UNITS * 4 <= n &&
                         (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    double r[UNITS][4];
    for (int u = 0; u < UNITS; u++) {
        for (int j = 0; j < 4; j++) {
            const int i = base + 4 * (u * BLOCK + tid) + j;
            r[u][j] = i < n ? x[i] : 0.0;
        }
    }
    for (int u = 0; u < UNITS; u++) {
        for (int j = 0; j < 4; j++) {
            const int i = base + 4 * (u * BLOCK + tid) + j;
            if (i < n) {
                y[i] = r[u][j];
            }
        }
    }
}
