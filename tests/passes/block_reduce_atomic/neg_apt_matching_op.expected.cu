// RUN: kltrans opt -p 'atomic-per-thread'
// CHECK-SKIP: matching-op: the warp shuffles combine with max and max but the atomic is atomicAdd
// Each block adds its MAXIMUM to a running total: per-thread atomicAdds would add every
// element instead.
// kltrans: launch sum_of_block_max grid=ceil_div(n, 256) block=256
extern "C" __global__ void sum_of_block_max(const int* x, int* out, int n)
{
    __shared__ int part[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : -2147483647 - 1;
    for (int off = 16; off > 0; off >>= 1) {
        v = max(v, __shfl_xor_sync(0xffffffffu, v, off));
    }
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) {
        part[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? part[lane] : -2147483647 - 1;
        for (int off = 16; off > 0; off >>= 1) {
            v = max(v, __shfl_xor_sync(0xffffffffu, v, off));
        }
        if (lane == 0) {
            atomicAdd(out, v);
        }
    }
}
