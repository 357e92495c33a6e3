// RUN: kltrans opt -p 'warp-block-scan{carry=row_carry,inc=run,off=d,up=from_left,lane=lid,warp=wid,totals=warp_sums,warps=NWARPS,warp_prefix=earlier,aggregate=tile_sum,w=q,t=s,shared=tile_prefix}' --assume 'no_alias(*)'
// GATE: corpus/scan
// 128 threads x 4 units of 4: lane and warp spelled with % and /, other names.
// kltrans: launch scan grid=ceil_div(n, 2048) block=128
#include <stdint.h>

#define THREADS 128
#define NWARPS (THREADS / 32)
#define UNITS 4
#define WARP_ELEMS (32 * UNITS * 4)
#define TILE_ELEMS (NWARPS * WARP_ELEMS)

extern "C" __global__ void
scan(const int* in, int* out, int n, unsigned long long* scratch)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const unsigned int tile = blockIdx.x;
    const int lid = threadIdx.x % 32;
    const int wid = threadIdx.x / 32;
    const size_t tile_base = (size_t)tile * TILE_ELEMS;
    const size_t warp_base = tile_base + (size_t)wid * WARP_ELEMS;
    const bool vec_ok = tile_base + TILE_ELEMS <= count &&
                        (((uintptr_t)in | (uintptr_t)out) & 15u) == 0;

    // unit u = k * 32 + lid of the warp's 512 elements covers elements 4u .. 4u + 3
    unsigned int vals[UNITS][4];
    for (int k = 0; k < UNITS; ++k) {
        for (int j = 0; j < 4; ++j) {
            const size_t i = warp_base + 4 * (size_t)(k * 32 + lid) + j;
            vals[k][j] = i < count ? (unsigned int)in[i] : 0u;
        }
    }

    // every thread sums what comes before each of its units, and before the tile
    unsigned int before_unit[UNITS];
    for (int k = 0; k < UNITS; ++k) {
        vals[k][1] += vals[k][0];
        vals[k][2] += vals[k][1];
        vals[k][3] += vals[k][2];
        before_unit[k] = 0u;
        for (size_t i = tile_base; i < warp_base + 4 * (size_t)(k * 32 + lid); ++i) {
            before_unit[k] += i < count ? (unsigned int)in[i] : 0u;
        }
    }
    unsigned int tile_pre = 0u;
    for (size_t i = 0; i < tile_base; ++i) {
        tile_pre += (unsigned int)in[i];
    }
    const unsigned int start = tile_pre;

    for (int k = 0; k < UNITS; ++k) {
        const unsigned int b = start + before_unit[k];
        for (int j = 0; j < 4; ++j) {
            const size_t i = warp_base + 4 * (size_t)(k * 32 + lid) + j;
            if (i < count) {
                out[i] = (int)(b + vals[k][j]);
            }
        }
    }
}
