// RUN: kltrans opt -p 'atomic-per-thread' --assume reassoc
// GATE: corpus/reduce-sum
// The block that block-reduce-atomic{shuffle=down} writes on the reduce-sum naive kernel:
// atomic-per-thread gives the guarded per-thread atomicAdd back.
// kltrans: launch reduce_sum_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum_naive(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    {
        float val = (i < n) ? x[i] : 0.0f;
        __shared__ float warp_part[32];
        for (int off = 16; off > 0; off >>= 1) {
            val += __shfl_down_sync(0xffffffffu, val, off);
        }
        const int lane = threadIdx.x & 31;
        const int warp = threadIdx.x >> 5;
        if (lane == 0) {
            warp_part[warp] = val;
        }
        __syncthreads();
        if (warp == 0) {
            val = lane < (blockDim.x >> 5) ? warp_part[lane] : 0.0f;
            for (int off = 16; off > 0; off >>= 1) {
                val += __shfl_down_sync(0xffffffffu, val, off);
            }
            if (lane == 0) {
                atomicAdd(out, val);
            }
        }
    }
}
