// RUN: kltrans opt -p 'vectorize-split'
// CHECK-SKIP: read-only: is written
// The kernel also clears the array it sums (in another statement): the vector pointer
// would read memory that the kernel writes.
// kltrans: launch drain grid=min(ceil_div(n, 256), 264) block=256
__global__ void drain(unsigned int* cnt, unsigned int* total, size_t n)
{
    unsigned int acc = 0u;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        acc += cnt[i];
    }
    atomicAdd(total, acc);
    cnt[0] = 0u;
}
