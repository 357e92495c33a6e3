// RUN: kltrans opt -p 'l2-prefetch{ahead=PREFETCH_TILES,form=offset,base=tile_start,len=TILE,limit=total,after=tile_start}'
// Tiles of TILE ints per block, walked by a while loop; the block's first element is
// tile_start, so the prefetch is written tile_start + (size_t)PREFETCH_TILES * TILE.
// kltrans: launch tile_sum grid=ceil_div(n, 1024) block=256
#include <stdint.h>
#define TILE 1024
#define PREFETCH_TILES 16

template <int ITEMS>
__global__ void tile_sum_t(const int* in, int* partial, int n)
{
    __shared__ int s[256];
    const size_t total = (size_t)n;
    const size_t tile_start = (size_t)blockIdx.x * TILE;
    int acc = 0;
    int k = 0;
    while (k < ITEMS) {
        size_t i = tile_start + (size_t)k * blockDim.x + threadIdx.x;
        if (i < total) acc += in[i];
        ++k;
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        int t = 0;
        for (int j = 0; j < 256; ++j) t += s[j];
        partial[blockIdx.x] = t;
    }
}

extern "C" __global__ void tile_sum(const int* in, int* partial, int n)
{
    __shared__ int s[256];
    const size_t total = (size_t)n;
    const size_t tile_start = (size_t)blockIdx.x * TILE;
    int acc = 0;
    int k = 0;
    while (k < TILE / 256) {
        size_t i = tile_start + (size_t)k * blockDim.x + threadIdx.x;
        if (i < total) acc += in[i];
        ++k;
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        int t = 0;
        for (int j = 0; j < 256; ++j) t += s[j];
        partial[blockIdx.x] = t;
    }
}
