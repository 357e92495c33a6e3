// RUN: kltrans opt -p 'smem-reduce' --assume 'no_alias(*)' --assume reassoc
// CHECK-SKIP: whole-first: atomic-per-thread at line
// The warp shuffles are part of a block reduction atomic-per-thread removes whole (one
// atomicAdd per thread): it matches the shuffle form, so the shuffles stay until it goes.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 8192), 1056) block=256
// reduce-sum expert: *out += x[0] + ... + x[n-1] (float32); the caller zeroes *out.
// Mechanisms: a capped grid (at most 8 blocks of 256 threads per SM on 132 SMs) with a
// grid-stride loop; 16-byte float4 loads, four independent ones in flight per thread
// per iteration (__ldg, read-only path); a scalar head up to the first 16-byte boundary
// and a scalar tail, so any base address and any n work; per-thread float
// accumulation, warp-shuffle reduction, a block reduction through shared memory, and
// one atomicAdd per block into out.
#include <stdint.h>

#define RS_THREADS 256
#define RS_UNROLL 4

extern "C" __global__ void __launch_bounds__(RS_THREADS)
reduce_sum(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float warp_sums[RS_THREADS / 32];

    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;

    // elements before the first 16-byte boundary (0..3), then whole float4s, then a tail
    size_t head = ((16u - ((uintptr_t)x & 15u)) & 15u) / sizeof(float);
    if (head > count) {
        head = count;
    }
    const size_t nvec = (count - head) / 4;
    const size_t tail_start = head + nvec * 4;
    const float4* __restrict__ xv = reinterpret_cast<const float4*>(x + head);

    float acc = 0.0f;
    size_t i = tid;
    for (; i + (RS_UNROLL - 1) * nthreads < nvec; i += RS_UNROLL * nthreads) {
        float4 v[RS_UNROLL];
#pragma unroll
        for (int u = 0; u < RS_UNROLL; ++u) {
            v[u] = __ldg(xv + i + u * nthreads);
        }
#pragma unroll
        for (int u = 0; u < RS_UNROLL; ++u) {
            acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
    }
    for (; i < nvec; i += nthreads) {
        const float4 v = __ldg(xv + i);
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (tid < head) {
        acc += __ldg(x + tid);
    }
    if (tid < count - tail_start) {
        acc += __ldg(x + tail_start + tid);
    }

    // warp, then block reduction
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        acc += __shfl_xor_sync(0xffffffffu, acc, off);
    }
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) {
        warp_sums[warp] = acc;
    }
    __syncthreads();
    if (warp == 0) {
        const int nwarps = (blockDim.x + 31) >> 5;
        float s = lane < nwarps ? warp_sums[lane] : 0.0f;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            s += __shfl_xor_sync(0xffffffffu, s, off);
        }
        if (lane == 0) {
            atomicAdd(out, s);
        }
    }
}
