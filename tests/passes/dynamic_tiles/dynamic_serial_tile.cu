// RUN: kltrans opt -p 'dynamic-tiles'
// GATE: corpus/scan
// blockIdx.x tiles back to counter tiles (the shape static-tiles produces).
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
    __shared__ unsigned int s_part[256];
    __shared__ unsigned int s_excl;
    unsigned long long* counter = scratch;
    unsigned long long* flags = scratch + 1;
    const size_t count = n > 0 ? (size_t)n : 0;
    const unsigned int tile_id = blockIdx.x;
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
if (threadIdx.x == 0) {
        unsigned int excl = 0u;
        for (size_t i = 0; i < first; ++i) {
            excl += (unsigned int)in[i];
        }
        s_excl = excl;
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
