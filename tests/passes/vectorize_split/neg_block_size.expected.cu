// RUN: kltrans opt -p 'vectorize-split'
// CHECK-SKIP: block-size: need 3 threads
// Two threads per block: too few to take the up to three head and tail elements.
// kltrans: launch isum grid=min(ceil_div(n, 2), 8) block=2
__global__ void isum(const int* x, int* out, size_t n)
{
    int acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
