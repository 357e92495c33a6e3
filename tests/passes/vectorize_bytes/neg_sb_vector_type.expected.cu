// RUN: kltrans opt -p 'scalarize-bytes'
// CHECK-SKIP: vector-type: data points to signed char, but is read as uint4 units of 16 bytes
// Signed chars read as uint4: the helpers' unsigned bytes differ from the scalar ones.
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=128
#include <stdint.h>

__device__ __forceinline__ void count_word(unsigned int* bins, unsigned int w)
{
    atomicAdd(&bins[(w & 0xffu)], 1u);
    atomicAdd(&bins[((w >> 8) & 0xffu)], 1u);
    atomicAdd(&bins[((w >> 16) & 0xffu)], 1u);
    atomicAdd(&bins[(w >> 24)], 1u);
}

__device__ __forceinline__ void count_vec(unsigned int* bins, uint4 v)
{
    count_word(bins, v.x);
    count_word(bins, v.y);
    count_word(bins, v.z);
    count_word(bins, v.w);
}

extern "C" __global__ void histogram(const signed char* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    size_t head = (16u - ((uintptr_t)data & 15u)) & 15u;
    if (head > count) {
        head = count;
    }
    const size_t nvec = (count - head) / 16;
    const size_t tail_start = head + nvec * 16;
    const uint4* dv = reinterpret_cast<const uint4*>(data + head);

    for (size_t gid = threadIdx.x + blockDim.x * blockIdx.x; gid < nvec;
         gid += blockDim.x * gridDim.x) {
        count_vec(bins, dv[gid]);
    }
    if (threadIdx.x + blockDim.x * blockIdx.x < head) {
        atomicAdd(&bins[data[threadIdx.x + blockDim.x * blockIdx.x]], 1u);
    }
    if (threadIdx.x + blockDim.x * blockIdx.x < count - tail_start) {
        atomicAdd(&bins[data[tail_start + threadIdx.x + blockDim.x * blockIdx.x]], 1u);
    }
}
