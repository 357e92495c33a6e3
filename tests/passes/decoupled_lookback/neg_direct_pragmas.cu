// RUN: kltrans opt -p 'direct-tile-prefix'
// CHECK-SKIP: lookback-shape: the look-back differs from the form decoupled-lookback writes (window of 32 x slots words, __ballot_sync/__ffs scan, __reduce_add_sync); run reroll first if it has unroll pragmas
// Unroll pragmas are still in the window loops.
// kltrans: launch scan grid=ceil_div(n, 4096) block=256
#include <stdint.h>

#define ITEMS 16
#define TILE (256 * ITEMS)
#define SLOTS 2
#define WINDOW (32 * SLOTS)
#define ST_PARTIAL 1ull
#define ST_INCLUSIVE 2ull

__device__ __forceinline__ void publish_status(unsigned long long* w, unsigned long long flag, unsigned int v)
{
    *reinterpret_cast<volatile unsigned long long*>(w) = (flag << 32) | v;
}

extern "C" __global__ void scan(const int* in, int* out, int n, unsigned long long* scratch)
{
    __shared__ unsigned int s_tile;
    __shared__ unsigned int s_part[256];
    __shared__ unsigned int s_excl;
    unsigned long long* counter = scratch;
    unsigned long long* flags = scratch + 1;
    const size_t count = n > 0 ? (size_t)n : 0;
    if (threadIdx.x == 0) {
        s_tile = (unsigned int)atomicAdd(counter, 1ull);
    }
    __syncthreads();
    const unsigned int tile_id = s_tile;
    const int lid = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const size_t first = (size_t)tile_id * TILE;
    unsigned int v[ITEMS];
    unsigned int sum = 0u;
    for (int k = 0; k < ITEMS; ++k) {
        const size_t i = first + (size_t)threadIdx.x * ITEMS + k;
        v[k] = i < count ? (unsigned int)in[i] : 0u;
        sum += v[k];
        v[k] = sum;
    }
    s_part[threadIdx.x] = sum;
    __syncthreads();
    unsigned int before = 0u;
    unsigned int tile_total = 0u;
    for (int t2 = 0; t2 < 256; ++t2) {
        before += t2 < (int)threadIdx.x ? s_part[t2] : 0u;
        tile_total += s_part[t2];
    }
if (wid == 0) {
        unsigned int excl = 0u;
        if (tile_id == 0) {
            if (lid == 0) {
                publish_status(flags, ST_INCLUSIVE, tile_total);
            }
        } else {
            if (lid == 0) {
                publish_status(flags + tile_id, ST_PARTIAL, tile_total);
            }
            // window of WINDOW predecessors per step: lane l, slot j reads the tile at
            // distance d = l + 32 j + 1 (32 consecutive words per slot, coalesced)
            long long window = (long long)tile_id - 1;  // distance 1 = nearest predecessor
            while (true) {
                unsigned long long st[SLOTS];
                int first_inc;   // smallest distance index holding an inclusive prefix
                int first_zero;  // smallest distance index not yet published
                do {
                    #pragma unroll
                    for (int j = 0; j < SLOTS; ++j) {
                        const long long idx = window - (lid + 32 * j);
                        st[j] = idx >= 0
                            ? *reinterpret_cast<volatile unsigned long long*>(flags + idx)
                            : (ST_INCLUSIVE << 32);  // before tile 0: an empty prefix
                    }
                    first_inc = WINDOW;
                    first_zero = WINDOW;
                    for (int j = SLOTS - 1; j >= 0; --j) {
                        const unsigned int inc = __ballot_sync(0xffffffffu, (st[j] >> 32) == ST_INCLUSIVE);
                        const unsigned int zero = __ballot_sync(0xffffffffu, (st[j] >> 32) == 0ull);
                        if (inc) {
                            first_inc = 32 * j + __ffs(inc) - 1;
                        }
                        if (zero) {
                            first_zero = 32 * j + __ffs(zero) - 1;
                        }
                    }
                    // usable once every word up to the first inclusive one is published
                } while (first_zero < first_inc);
                unsigned int part = 0u;
                #pragma unroll
                for (int j = 0; j < SLOTS; ++j) {
                    part += lid + 32 * j <= first_inc ? (unsigned int)st[j] : 0u;
                }
                excl += __reduce_add_sync(0xffffffffu, part);
                if (first_inc < WINDOW) {
                    break;
                }
                window -= WINDOW;
            }
            if (lid == 0) {
                publish_status(flags + tile_id, ST_INCLUSIVE, excl + tile_total);
            }
        }
        if (lid == 0) {
            s_excl = excl;
        }
    }
    __syncthreads();
    const unsigned int base = s_excl + before;
    for (int k = 0; k < ITEMS; ++k) {
        const size_t i = first + (size_t)threadIdx.x * ITEMS + k;
        if (i < count) {
            out[i] = (int)(base + v[k]);
        }
    }
}
