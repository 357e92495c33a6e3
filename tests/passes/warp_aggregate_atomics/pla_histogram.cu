// RUN: kltrans opt -p 'per-lane-atomics' --arch sm_80
// GATE: corpus/histogram
// The block warp-aggregate-atomics writes for corpus/histogram/naive.cu, back to one
// atomicAdd per lane.
#include <stdint.h>

// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = data[i];
        if (v < 256u) {
            {
                const unsigned peers = __match_any_sync(__activemask(), v);
                if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&bins[v], 1u * __popc(peers));
            }
        }
    }
}
