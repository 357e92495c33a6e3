// RUN: kltrans opt -p 'block-reduce-atomic' --assume 'BLOCK_SIZE==512'
// A templated maximum: atomicMax on int, the block size a template parameter whose
// value comes from the context. Threads past the end contribute INT_MIN.
// kltrans: launch max_kernel grid=ceil_div(n, BLOCK_SIZE) block=BLOCK_SIZE
template <int BLOCK_SIZE>
__global__ void max_kernel(const int* input, int* result, int n)
{
    unsigned int gid = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    {
        int val = (gid < n) ? (input[gid] * 2 + 1) : (-2147483647 - 1);
        __shared__ int warp_part[32];
        for (int off = 16; off > 0; off >>= 1) {
            val = max(val, __shfl_xor_sync(0xffffffffu, val, off));
        }
        const int lane = threadIdx.x & 31;
        const int warp = threadIdx.x >> 5;
        if (lane == 0) {
            warp_part[warp] = val;
        }
        __syncthreads();
        if (warp == 0) {
            val = lane < (blockDim.x >> 5) ? warp_part[lane] : (-2147483647 - 1);
            for (int off = 16; off > 0; off >>= 1) {
                val = max(val, __shfl_xor_sync(0xffffffffu, val, off));
            }
            if (lane == 0) {
                atomicMax(result, val);
            }
        }
    }
}
template __global__ void max_kernel<512>(const int*, int*, int);
