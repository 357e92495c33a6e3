// RUN: kltrans opt -p 'block-reduce-atomic'
// Collecting flag bits with atomicOr: threads whose element is not NaN/inf-free add the
// bit; the identity of | is 0.
// kltrans: launch any_bad grid=ceil_div(n, 256) block=256
extern "C" __global__ void any_bad(const float* x, unsigned int* flags, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    {
        unsigned int val = (idx < n) ? (isfinite(x[idx]) ? 0u : 1u << (idx & 7)) : 0u;
        __shared__ unsigned int warp_part[32];
        for (int off = 16; off > 0; off >>= 1) {
            val |= __shfl_xor_sync(0xffffffffu, val, off);
        }
        const int lane = threadIdx.x & 31;
        const int warp = threadIdx.x >> 5;
        if (lane == 0) {
            warp_part[warp] = val;
        }
        __syncthreads();
        if (warp == 0) {
            val = lane < (blockDim.x >> 5) ? warp_part[lane] : 0u;
            for (int off = 16; off > 0; off >>= 1) {
                val |= __shfl_xor_sync(0xffffffffu, val, off);
            }
            if (lane == 0) {
                atomicOr(flags, val);
            }
        }
    }
}
