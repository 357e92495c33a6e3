// RUN: kltrans opt -p 'atomic-per-thread'
// CHECK-SKIP: dead-after: the atomic's address uses dst, declared by the fold
// The atomic's address is a pointer the fold declares: one atomic per thread before the
// fold could not name it.
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
        float* dst = out;
        float t = 0.0f;
        for (int w = 0; w < 8; ++w) {
            t += part[w];
        }
        atomicAdd(dst, t);
    }
}
