// RUN: kltrans opt -p 'atomic-per-thread'
// CHECK-SKIP: dead-after: v is used after the reduction
// The warp-reduced value is also stored per warp after the reduction: without the
// shuffles it would hold the thread's own value.
// kltrans: launch sum_and_warp_sums grid=ceil_div(n, 256) block=256
extern "C" __global__ void sum_and_warp_sums(const int* x, int* out, int* warp_out, int n)
{
    __shared__ int part[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, off);
    }
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) {
        part[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        int s = lane < (blockDim.x >> 5) ? part[lane] : 0;
        for (int off = 16; off > 0; off >>= 1) {
            s += __shfl_xor_sync(0xffffffffu, s, off);
        }
        if (lane == 0) {
            atomicAdd(out, s);
        }
    }
    if ((threadIdx.x & 31) == 0) warp_out[i >> 5] = v;
}
