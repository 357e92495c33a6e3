// RUN: kltrans opt -p 'vectorize-bytes{unroll=HG_UNROLL,params=col,vec=hg_count_vec,word=hg_count_word}'
// GATE: corpus/histogram
// The histogram's scalar grid-stride loop over a capped grid: uint4 units, HG_UNROLL
// loads in flight, helpers named as in the expert (pointer parameter `col`).
// kltrans: launch histogram grid=min(ceil_div(n, 65536), 792) block=256
#include <stdint.h>

#define HG_THREADS 256
#define HG_BINS 256
#define HG_UNROLL 4

extern "C" __global__ void
histogram(const uint8_t* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;

    // bytes before the first 16-byte boundary, whole uint4s, then a tail of < 16 bytes
    size_t i = tid;
    for (; i < count; i += nthreads) {
        atomicAdd(bins + (unsigned int)data[i], 1u);
    }
}
