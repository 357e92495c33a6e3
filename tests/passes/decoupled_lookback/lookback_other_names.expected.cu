// RUN: kltrans opt -p 'decoupled-lookback{warp=warp_id,lane=lane_id,aggregate=total,publish=store_word,status=state,inclusive=INCL,partial=AGG,slots=PER_LANE,look=SPAN}'
// GATE: corpus/scan
// tile index t from the counter, lane/warp spelled with % and /.
// kltrans: launch scan grid=ceil_div(n, 4096) block=256
#include <stdint.h>

#define ITEMS 16
#define TILE (256 * ITEMS)
#define PER_LANE 1
#define SPAN (32 * PER_LANE)
#define AGG 1ull
#define INCL 2ull

__device__ __forceinline__ void store_word(unsigned long long* w, unsigned long long flag, unsigned int v)
{
    *reinterpret_cast<volatile unsigned long long*>(w) = (flag << 32) | v;
}

extern "C" __global__ void scan(const int* in, int* out, int n, unsigned long long* scratch)
{
    __shared__ unsigned int s_tile;
    __shared__ unsigned int s_part[256];
    __shared__ unsigned int s_carry;
    unsigned long long* counter = scratch;
    unsigned long long* state = scratch + 1;
    const size_t count = n > 0 ? (size_t)n : 0;
    if (threadIdx.x == 0) {
        s_tile = (unsigned int)atomicAdd(counter, 1ull);
    }
    __syncthreads();
    const unsigned int t = s_tile;
    const int lane_id = threadIdx.x % 32;
    const int warp_id = threadIdx.x / 32;
    const size_t t_first = (size_t)t * TILE;
    unsigned int v[ITEMS];
    unsigned int sum = 0u;
    for (int k = 0; k < ITEMS; ++k) {
        const size_t i = t_first + (size_t)threadIdx.x * ITEMS + k;
        v[k] = i < count ? (unsigned int)in[i] : 0u;
        sum += v[k];
        v[k] = sum;
    }
    s_part[threadIdx.x] = sum;
    __syncthreads();
    unsigned int before = 0u;
    unsigned int total = 0u;
    for (int t2 = 0; t2 < 256; ++t2) {
        before += t2 < (int)threadIdx.x ? s_part[t2] : 0u;
        total += s_part[t2];
    }
if (warp_id == 0) {
    unsigned int carry_in = 0u;
    if (t == 0) {
        if (lane_id == 0) {
            store_word(state, INCL, total);
        }
    } else {
        if (lane_id == 0) {
            store_word(state + t, AGG, total);
        }
        // window of SPAN predecessors per step: lane l, slot j reads the tile at
        // distance d = l + 32 j + 1 (32 consecutive words per slot, coalesced)
        long long window = (long long)t - 1;  // distance 1 = nearest predecessor
        while (true) {
            unsigned long long st[PER_LANE];
            int first_inc;   // smallest distance index holding an inclusive prefix
            int first_zero;  // smallest distance index not yet published
            do {
                for (int j = 0; j < PER_LANE; ++j) {
                    const long long idx = window - (lane_id + 32 * j);
                    st[j] = idx >= 0
                        ? *reinterpret_cast<volatile unsigned long long*>(state + idx)
                        : (INCL << 32);  // before tile 0: an empty prefix
                }
                first_inc = SPAN;
                first_zero = SPAN;
                for (int j = PER_LANE - 1; j >= 0; --j) {
                    const unsigned int inc = __ballot_sync(0xffffffffu, (st[j] >> 32) == INCL);
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
            for (int j = 0; j < PER_LANE; ++j) {
                part += lane_id + 32 * j <= first_inc ? (unsigned int)st[j] : 0u;
            }
            carry_in += __reduce_add_sync(0xffffffffu, part);
            if (first_inc < SPAN) {
                break;
            }
            window -= SPAN;
        }
        if (lane_id == 0) {
            store_word(state + t, INCL, carry_in + total);
        }
    }
    if (lane_id == 0) {
        s_carry = carry_in;
    }
}
    __syncthreads();
    const unsigned int base = s_carry + before;
    for (int k = 0; k < ITEMS; ++k) {
        const size_t i = t_first + (size_t)threadIdx.x * ITEMS + k;
        if (i < count) {
            out[i] = (int)(base + v[k]);
        }
    }
}
