// RUN: kltrans opt -p 'atomic-per-thread'
// CHECK-SKIP: barrier-private: the shared array tile is used before and after the reduction
// The reduction's __syncthreads() also orders the writes to tile before the reversed
// read after it: removing it would race.
// kltrans: launch sum_and_reverse grid=ceil_div(n, 256) block=256
extern "C" __global__ void sum_and_reverse(const int* x, int* out, int* y, int n)
{
    __shared__ int tile[256];
    __shared__ int part[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    tile[threadIdx.x] = v;
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
    if (i < n) y[i] = tile[255 - threadIdx.x];
}
