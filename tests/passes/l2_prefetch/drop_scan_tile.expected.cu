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
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) {
        const size_t i = tile_base + k;
        if (i < count) y[i] = x[i];
    }
}
