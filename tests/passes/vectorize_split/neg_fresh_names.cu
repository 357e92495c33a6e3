// RUN: kltrans opt -p 'vectorize-split{head=head}'
// CHECK-SKIP: fresh-names: already used
// The requested name head is already a parameter of the kernel.
// kltrans: launch isum grid=min(ceil_div(n, 256), 264) block=256
__global__ void isum(const int* x, int* out, int* head, size_t n)
{
    int acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
    if (threadIdx.x == 0) head[0] = 1;
}
