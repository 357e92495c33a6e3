// RUN: kltrans opt -p 'reroll' --site 1
// CHECK-SKIP: not-generated: hg_count_word is the word helper of a byte split vectorize-bytes writes
// The four byte atomics of hg_count_word are the helper vectorize-bytes writes for the
// byte loop; scalarize-bytes removes both helpers whole once they are exactly that, so the
// middle two are not re-rolled first.
// kltrans: launch histogram grid=min(ceil_div(n, 65536), 792) block=256
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

__device__ __forceinline__ void hg_count_word(unsigned int* col, unsigned int w)
{
    // col points at counter [0][lane]; bin b lives at col[b * 32]
    atomicAdd(col + ((w & 0xffu) << 5), 1u);
    atomicAdd(col + (((w >> 8) & 0xffu) << 5), 1u);
    atomicAdd(col + (((w >> 16) & 0xffu) << 5), 1u);
    atomicAdd(col + ((w >> 24) << 5), 1u);
}

__device__ __forceinline__ void hg_count_vec(unsigned int* col, uint4 v)
{
    hg_count_word(col, v.x);
    hg_count_word(col, v.y);
    hg_count_word(col, v.z);
    hg_count_word(col, v.w);
}

extern "C" __global__ void __launch_bounds__(HG_THREADS)
histogram(const uint8_t* __restrict__ data, unsigned int* __restrict__ bins, int n)
{
    __shared__ unsigned int counts[HG_BINS * 32];  // [bin][lane]

    for (int i = threadIdx.x; i < HG_BINS * 32; i += blockDim.x) {
        counts[i] = 0u;
    }
    __syncthreads();

    const int lane = threadIdx.x & 31;
    unsigned int* col = counts + lane;
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;

    // bytes before the first 16-byte boundary, whole uint4s, then a tail of < 16 bytes
    size_t head = (16u - ((uintptr_t)data & 15u)) & 15u;
    if (head > count) {
        head = count;
    }
    const size_t nvec = (count - head) / 16;
    const size_t tail_start = head + nvec * 16;
    const uint4* __restrict__ dv = reinterpret_cast<const uint4*>(data + head);

    size_t i = tid;
    for (; i + (HG_UNROLL - 1) * nthreads < nvec; i += HG_UNROLL * nthreads) {
        uint4 v[HG_UNROLL];
#pragma unroll
        for (int u = 0; u < HG_UNROLL; ++u) {
            v[u] = __ldg(dv + i + u * nthreads);
        }
#pragma unroll
        for (int u = 0; u < HG_UNROLL; ++u) {
            hg_count_vec(col, v[u]);
        }
    }
    for (; i < nvec; i += nthreads) {
        hg_count_vec(col, __ldg(dv + i));
    }
    if (tid < head) {
        atomicAdd(col + ((unsigned int)data[tid] << 5), 1u);
    }
    if (tid < count - tail_start) {
        atomicAdd(col + ((unsigned int)data[tail_start + tid] << 5), 1u);
    }
    __syncthreads();

    // merge: thread b sums the 32 columns of bin b (rotated, so a warp's reads hit 32
    // different banks), one global atomic per non-empty bin
    for (int b = threadIdx.x; b < HG_BINS; b += blockDim.x) {
        const unsigned int* row = counts + b * 32;
        unsigned int total = 0u;
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            total += row[(l + b) & 31];
        }
        if (total != 0u) {
            atomicAdd(bins + b, total);
        }
    }
}
