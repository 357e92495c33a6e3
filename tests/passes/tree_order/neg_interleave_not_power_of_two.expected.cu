// RUN: kltrans opt -p interleave-tree --assume reassoc
// CHECK-SKIP: power-of-two-slots: 96 slots is not a power of two
// A block of 96 threads: halving and interleaved rounds fold different slots.
// kltrans: launch reduce_sum grid=ceil_div(n, 96) block=96
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[96];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}
