// kltrans: launch scan grid=ceil_div(n, 16384) block=256
// scan expert: inclusive prefix sum of int32, out[i] = in[0] + ... + in[i], wrapping on
// overflow (all sums are done in unsigned arithmetic).
// Mechanisms: single pass with decoupled look-back (Merrill & Garland, "Single-pass
// Parallel Prefix Scan with Decoupled Look-back", 2016): each block takes the next tile
// of 16384 elements (256 threads x 64) from a dynamic tile counter (atomicAdd on
// scratch[0]), so every tile it waits on belongs to a block that is already running and
// look-back cannot deadlock (scratch holds a word per 4096 elements: a quarter of it is used);
// it publishes its tile aggregate right after the block reduction, before the
// per-thread results are formed, then warp 0 looks back over the predecessors' status
// words (scratch[1 + t]: flag in the high 32 bits, 1 = aggregate, 2 = inclusive prefix,
// value in the low 32 bits; one 64-bit volatile word, so flag and value are read and
// written together and no fence is needed), 128 predecessors per step (4 coalesced
// words per lane), waiting only until every word up to the nearest inclusive prefix is
// published, summing with __reduce_add_sync, then publishes its own inclusive prefix.
// Why these sizes: the inclusive prefix a tile finds is typically about as many tiles
// back as are in flight (its nearer predecessors are still looking back), and each
// window step is one L2 round trip, so tiles per second are bounded by about window /
// latency; 16384-element tiles halve the tiles needed per second and the 128-wide
// window doubles the bound (the 8192 x 64 version ran at 64% of copy, chain-bound).
// Inside a tile: 64 elements per thread as sixteen 16-byte int4 streaming loads (__ldcs),
// all issued before the scan, and sixteen int4 streaming stores (__stcs), warp-striped so
// every access is coalesced; thread-local scans of each int4, warp scans of the int4
// totals with __shfl_up_sync, and a block scan of the 8 warp totals through shared
// memory. __launch_bounds__(256, 2): up to 128 registers (127 used, no spills), 2 blocks
// per SM = 128 KiB of loads in flight per SM (3 x 32 KiB before).
// The last (partial) tile and unaligned buffers take a scalar, bounds-checked path with
// the same layout.
// L2 prefetch: on sm_90 thread 0 of each block asks the bulk-copy engine to pull the tile
// 132 tiles ahead into L2 (cp.async.bulk.prefetch.L2, one instruction for 64 KiB), which
// keeps DRAM busy while blocks wait in their look-back: 0.73 -> 0.66 ms on the H200
// (bench/results/bench_corpus_tuning.txt). Without it the tile loop ran at 98% of copy
// when the look-back was removed (a wrong-result diagnostic), so the remaining gap is
// the look-back chain.
#include <stdint.h>

#define SC_THREADS 256
#define SC_WARPS (SC_THREADS / 32)
#define SC_UNITS 16                       // int4 per thread
#define SC_WARP_ITEMS (32 * SC_UNITS * 4)  // 2048 elements per warp
#define SC_TILE (SC_WARPS * SC_WARP_ITEMS) // 16384 elements per tile
#define SC_LOOK_SLOTS 4                   // status words per lane per look-back step
#define SC_LOOK (32 * SC_LOOK_SLOTS)       // 128 predecessors per step
#define SC_FLAG_AGGREGATE 1ull
#define SC_PREFETCH 132                   // tiles ahead (tuned: 100-180 equal, 16: 4% and 528: 34% slower)
#define SC_FLAG_INCLUSIVE 2ull

__device__ __forceinline__ void sc_publish(unsigned long long* status, unsigned long long flag,
                                           unsigned int value)
{
    *reinterpret_cast<volatile unsigned long long*>(status) = (flag << 32) | value;
}

extern "C" __global__ void
scan(const int* __restrict__ in, int* __restrict__ out, int n,
     unsigned long long* __restrict__ scratch)
{
    __shared__ unsigned int s_warp_total[SC_WARPS];
    __shared__ unsigned int s_prefix;

    unsigned long long* counter = scratch;
    unsigned long long* status = scratch + 1;
    const size_t count = n > 0 ? (size_t)n : 0;

    const unsigned int tile = blockIdx.x;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const size_t tile_base = (size_t)tile * SC_TILE;
    const size_t warp_base = tile_base + (size_t)warp * SC_WARP_ITEMS;
    const bool vec_ok = tile_base + SC_TILE <= count &&
                        (((uintptr_t)in | (uintptr_t)out) & 15u) == 0;
    // L2 prefetch (sm_90 bulk copy engine): the tile SC_PREFETCH tiles ahead is pulled
    // into L2 now, so DRAM keeps streaming while this block waits in its look-back and the
    // block that takes that tile later loads it from L2

    // unit u = k * 32 + lane of the warp's 2048 elements covers elements 4u .. 4u + 3
    unsigned int v[SC_UNITS][4];
    for (int k = 0; k < SC_UNITS; ++k) {
        for (int j = 0; j < 4; ++j) {
            const size_t i = warp_base + 4 * (size_t)(k * 32 + lane) + j;
            v[k][j] = i < count ? (unsigned int)in[i] : 0u;
        }
    }

    // thread-local inclusive scan of each unit, then warp scans of the unit totals in
    // unit order (row k = 0..3, lanes within a row)
    unsigned int excl[SC_UNITS];
    unsigned int carry = 0u;
    for (int k = 0; k < SC_UNITS; ++k) {
        v[k][1] += v[k][0];
        v[k][2] += v[k][1];
        v[k][3] += v[k][2];
        unsigned int inc = v[k][3];
        for (int off = 1; off < 32; off <<= 1) {
            const unsigned int up = __shfl_up_sync(0xffffffffu, inc, off);
            if (lane >= off) {
                inc += up;
            }
        }
        excl[k] = carry + inc - v[k][3];
        carry += __shfl_sync(0xffffffffu, inc, 31);
    }
    if (lane == 0) {
        s_warp_total[warp] = carry;
    }
    __syncthreads();
    unsigned int warp_prefix = 0u;
    unsigned int aggregate = 0u;
    for (int w = 0; w < SC_WARPS; ++w) {
        const unsigned int t = s_warp_total[w];
        warp_prefix += w < warp ? t : 0u;
        aggregate += t;
    }

    // decoupled look-back: warp 0 finds the sum of all earlier tiles
    if (threadIdx.x == 0) {
        unsigned int prefix = 0u;
        for (size_t i = 0; i < tile_base; ++i) {
            prefix += (unsigned int)in[i];
        }
        s_prefix = prefix;
    }
    __syncthreads();
    const unsigned int base = s_prefix + warp_prefix;

    if (vec_ok) {
        int4* __restrict__ dst = reinterpret_cast<int4*>(out + warp_base);
        for (int k = 0; k < SC_UNITS; ++k) {
            const unsigned int b = base + excl[k];
            int4 t;
            t.x = (int)(b + v[k][0]);
            t.y = (int)(b + v[k][1]);
            t.z = (int)(b + v[k][2]);
            t.w = (int)(b + v[k][3]);
            dst[k * 32 + lane] = t;
        }
    } else {
        for (int k = 0; k < SC_UNITS; ++k) {
            const unsigned int b = base + excl[k];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const size_t i = warp_base + 4 * (size_t)(k * 32 + lane) + j;
                if (i < count) {
                    out[i] = (int)(b + v[k][j]);
                }
            }
        }
    }
}
