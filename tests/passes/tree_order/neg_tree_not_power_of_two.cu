// RUN: kltrans opt -p tree-order --assume reassoc
// CHECK-SKIP: power-of-two-slots: 96 slots is not a power of two
// A block of 96 threads: the interleaved rounds and the halving ones fold different
// slots (halving 96 leaves slot 2's pair out after the round of 3).
// kltrans: launch reduce_sum grid=ceil_div(n, 96) block=96
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[96];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0 && tid + s < blockDim.x) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}
