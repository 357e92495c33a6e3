// RUN: kltrans opt -p 'vectorize-bytes{unroll=2,pragma=false,cast=size_t,forceinline=false}'
// Weighted byte counts (each byte counts twice, (int) cast), block size and grid from
// macros, the stride a named variable: two uint4 units per iteration, no pragma.
// kltrans: launch weigh_bytes grid=min(CEIL_DIV(n, BLOCK * 64), 512) block=BLOCK
#include <stdint.h>
#define BLOCK 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

__global__ void weigh_bytes(const uint8_t* bytes, unsigned long long* weights, size_t n)
{
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    size_t i = tid;
    for (; i < n; i += stride) {
        atomicAdd(weights + (int)bytes[i], 2ull);
    }
}
