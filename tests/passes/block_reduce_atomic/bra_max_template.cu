// RUN: kltrans opt -p 'block-reduce-atomic' --assume 'BLOCK_SIZE==512'
// A templated maximum: atomicMax on int, the block size a template parameter whose
// value comes from the context. Threads past the end contribute INT_MIN.
// kltrans: launch max_kernel grid=ceil_div(n, BLOCK_SIZE) block=BLOCK_SIZE
template <int BLOCK_SIZE>
__global__ void max_kernel(const int* input, int* result, int n)
{
    unsigned int gid = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (gid < n)
        atomicMax(result, input[gid] * 2 + 1);
}
template __global__ void max_kernel<512>(const int*, int*, int);
