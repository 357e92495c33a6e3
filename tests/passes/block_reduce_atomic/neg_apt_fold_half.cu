// RUN: kltrans opt -p 'atomic-per-thread'
// CHECK-SKIP: reduction-shape: not the +-fold of every thread's
// Thread 0 adds only the first four of the eight warp partials: half the block is lost,
// so one atomic per thread would add what this kernel never adds.
// kltrans: launch block_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_sum(const float* x, float* out, int n)
{
    __shared__ float part[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, off);
    }
    if ((threadIdx.x & 31) == 0) {
        part[threadIdx.x >> 5] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < 4; ++w) {
            t += part[w];
        }
        atomicAdd(out, t);
    }
}
