// RUN: kltrans opt -p unroll-last-warp
// CHECK-SKIP: loop-end: 32 slots
// A block of 32 threads: the whole tree is already one warp's; there is no loop left to
// stop earlier.
// kltrans: launch reduce_sum grid=ceil_div(n, 32) block=32
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[32];
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
