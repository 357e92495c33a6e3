// RUN: kltrans opt -p 'atomic-per-thread'
// CHECK-SKIP: reduction-shape: the region also stores
// Thread 0 also writes the block's sum to a per-block slot: removing the fold would lose
// that store.
// kltrans: launch block_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_sum(const float* x, float* out, float* sums, int n)
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
        for (int w = 0; w < 8; ++w) {
            t += part[w];
        }
        sums[blockIdx.x] = t;
        atomicAdd(out, t);
    }
}
