// RUN: kltrans opt -p 'warp-aggregate-atomics' --arch sm_80
// GATE: corpus/histogram
// corpus/histogram/naive.cu: lanes that hit the same bin are grouped by __match_any_sync and
// their leader adds the group's size; the atomic sits under two thread-dependent
// branches, so the mask is __activemask().
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
// histogram naive: bins[v] += 1 for every byte v of data[0..n), 256 uint32 bins.
// The caller zeroes bins before the launch; one global atomicAdd per element.
// launch: grid = ceil(n/256), block = 256
#include <stdint.h>

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = data[i];
        if (v < 256u) {
            atomicAdd(&bins[v], 1u);
        }
    }
}
