// RUN: kltrans opt -p 'unroll-stride{factor=HG_UNROLL,var=u,braces=true,array=v,type=uint4}' --assume 'no_alias(*)'
// CHECK-SKIP: stride-loop: `data[i]` reads uint8_t: the register array cannot be type=uint4
// The loop reads bytes; a register array of another type (the option's value from
// another kernel's lineage) would not compile.
// kltrans: launch histogram grid=min(ceil_div(n, 256), 1024) block=256
// histogram expert: bins[v] += 1 for every byte v of data[0..n), 256 uint32 bins; the
// caller zeroes bins.
// Mechanisms: shared-memory privatization with one counter column per lane: the block
// keeps 256 x 32 counters (32 KB), and lane l of every warp counts into column l, so
// the 32 lanes of a warp always hit 32 different banks (no bank conflicts, whatever the
// data) and shared atomics only collide between warps; at the end the block merges the
// 32 columns of each bin (rotated reads, conflict-free) and adds them to bins with one
// global atomicAdd per bin per block. Data comes in 16-byte uint4 loads, four in flight
// per thread, in a grid-stride loop over a grid capped at 6 blocks per SM (132 SMs,
// 32 KB of shared memory each); a scalar head up to the first 16-byte boundary and a
// scalar tail handle any base address and any n.
#include <stdint.h>

#define HG_THREADS 256
#define HG_BINS 256
#define HG_UNROLL 4

extern "C" __global__ void
histogram(const uint8_t* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

    // bytes before the first 16-byte boundary, whole uint4s, then a tail of < 16 bytes
    for (size_t i = tid; i < count; i += blockDim.x * gridDim.x) {
        atomicAdd(bins + (unsigned int)data[i], 1u);
    }
}
