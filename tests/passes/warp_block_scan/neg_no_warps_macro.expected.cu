// RUN: kltrans opt -p 'warp-block-scan{warps=WARPS}' --assume 'no_alias(*)'
// CHECK-SKIP: whole-warps: WARPS is not a constant
// The warp-count macro named, WARPS, is not defined here (the file calls it SC_WARPS).
// kltrans: launch scan grid=ceil_div(n, 16384) block=256
#include <stdint.h>

#define SC_THREADS 256
#define SC_WARPS (SC_THREADS / 32)
#define SC_UNITS 16                        // int4 per thread
#define SC_WARP_ITEMS (32 * SC_UNITS * 4)  // 2048 elements per warp
#define SC_TILE (SC_WARPS * SC_WARP_ITEMS) // 16384 elements per tile

extern "C" __global__ void
scan(const int* in, int* out, int n, unsigned long long* scratch)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const unsigned int tile = blockIdx.x;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const size_t tile_base = (size_t)tile * SC_TILE;
    const size_t warp_base = tile_base + (size_t)warp * SC_WARP_ITEMS;
    const bool vec_ok = tile_base + SC_TILE <= count &&
                        (((uintptr_t)in | (uintptr_t)out) & 15u) == 0;

    // unit u = k * 32 + lane of the warp's 2048 elements covers elements 4u .. 4u + 3
    unsigned int v[SC_UNITS][4];
    for (int k = 0; k < SC_UNITS; ++k) {
        for (int j = 0; j < 4; ++j) {
            const size_t i = warp_base + 4 * (size_t)(k * 32 + lane) + j;
            v[k][j] = i < count ? (unsigned int)in[i] : 0u;
        }
    }

    // every thread sums what comes before each of its units, and before the tile
    unsigned int excl[SC_UNITS];
    for (int k = 0; k < SC_UNITS; ++k) {
        v[k][1] += v[k][0];
        v[k][2] += v[k][1];
        v[k][3] += v[k][2];
        excl[k] = 0u;
        for (size_t i = tile_base; i < warp_base + 4 * (size_t)(k * 32 + lane); ++i) {
            excl[k] += i < count ? (unsigned int)in[i] : 0u;
        }
    }
    unsigned int prefix = 0u;
    for (size_t i = 0; i < tile_base; ++i) {
        prefix += (unsigned int)in[i];
    }
    const unsigned int base = prefix;

    for (int k = 0; k < SC_UNITS; ++k) {
        const unsigned int b = base + excl[k];
        for (int j = 0; j < 4; ++j) {
            const size_t i = warp_base + 4 * (size_t)(k * 32 + lane) + j;
            if (i < count) {
                out[i] = (int)(b + v[k][j]);
            }
        }
    }
}
