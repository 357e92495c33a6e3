// RUN: kltrans opt -p 'vectorize-bytes{unroll=2,pragma=false,cast=size_t,forceinline=false}'
// Weighted byte counts (each byte counts twice, (int) cast), block size and grid from
// macros, the stride a named variable: two uint4 units per iteration, no pragma.
// kltrans: launch weigh_bytes grid=min(CEIL_DIV(n, BLOCK * 64), 512) block=BLOCK
#include <stdint.h>
#define BLOCK 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

__device__ void count_word(unsigned long long* weights, unsigned int w)
{
    atomicAdd(weights + (w & 0xffu), 2ull);
    atomicAdd(weights + ((w >> 8) & 0xffu), 2ull);
    atomicAdd(weights + ((w >> 16) & 0xffu), 2ull);
    atomicAdd(weights + (w >> 24), 2ull);
}

__device__ void count_vec(unsigned long long* weights, uint4 v)
{
    count_word(weights, v.x);
    count_word(weights, v.y);
    count_word(weights, v.z);
    count_word(weights, v.w);
}

__global__ void weigh_bytes(const uint8_t* bytes, unsigned long long* weights, size_t n)
{
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    size_t head = (16u - ((size_t)bytes & 15u)) & 15u;
    if (head > n) {
        head = n;
    }
    const size_t nvec = (n - head) / 16;
    const size_t tail_start = head + nvec * 16;
    const uint4* dv = reinterpret_cast<const uint4*>(bytes + head);

    size_t i = tid;
    for (; i + 1 * stride < nvec; i += 2 * stride) {
        uint4 v[2];
        for (int u = 0; u < 2; ++u) {
            v[u] = dv[i + u * stride];
        }
        for (int u = 0; u < 2; ++u) {
            count_vec(weights, v[u]);
        }
    }
    for (; i < nvec; i += stride) {
        count_vec(weights, dv[i]);
    }
    if (tid < head) {
        atomicAdd(weights + (int)bytes[tid], 2ull);
    }
    if (tid < n - tail_start) {
        atomicAdd(weights + (int)bytes[tail_start + tid], 2ull);
    }
}
