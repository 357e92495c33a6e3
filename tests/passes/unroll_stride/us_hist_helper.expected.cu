// RUN: kltrans opt -p 'unroll-stride{factor=UNROLL,array=w,braces=false}' --assume 'no_alias(*)' --site 2
// GATE: corpus/histogram
// A grid-stride histogram over 32-bit words: the body hands data[i] to a __device__
// helper doing shared atomics. The loads may still be issued first: data points to const
// and (no_alias from the context) nothing the helper writes overlaps it.
// kltrans: launch histogram grid=min(ceil_div(n, 1024), 264) block=256
#include <stdint.h>
#define UNROLL 4

__device__ __forceinline__ void count_word(unsigned int* h, unsigned int w)
{
    atomicAdd(&h[w & 0xffu], 1u);
    atomicAdd(&h[(w >> 8) & 0xffu], 1u);
    atomicAdd(&h[(w >> 16) & 0xffu], 1u);
    atomicAdd(&h[w >> 24], 1u);
}

extern "C" __global__ void histogram(const uint8_t* data, unsigned int* bins, int n)
{
    __shared__ unsigned int hist[256];
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        hist[k] = 0u;
    }
    __syncthreads();
    const unsigned int* words = reinterpret_cast<const unsigned int*>(data);
    const size_t nwords = (size_t)(n > 0 ? n : 0) / 4;
    const size_t gid = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    size_t i = gid;
    for (; i + (UNROLL - 1) * stride < nwords; i += UNROLL * stride) {
        unsigned int w[UNROLL];
        for (int u = 0; u < UNROLL; ++u)
            w[u] = words[i + u * stride];
        for (int u = 0; u < UNROLL; ++u)
            count_word(hist, w[u]);
    }
    for (; i < nwords; i += stride) {
        count_word(hist, words[i]);
    }
    for (size_t j = nwords * 4 + gid; j < (size_t)(n > 0 ? n : 0); j += stride) {
        atomicAdd(&hist[data[j]], 1u);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        if (hist[k]) {
            atomicAdd(&bins[k], hist[k]);
        }
    }
}
