// RUN: kltrans opt -p interleave-tree
// GATE: tests/data/workloads/blockmax
// A max tree with sequential addressing, a constant first half, the thread's index read
// directly: back to interleaved pairs. A max comes out the same in any order, so no
// tolerance is needed.
// kltrans: launch block_max grid=ceil_div(n, 64) block=64
extern "C" __global__ void block_max(const float* x, float* out, int n)
{
    __shared__ float m[64];
    int g = blockIdx.x * 64 + threadIdx.x;
    m[threadIdx.x] = g < n ? x[g] : -INFINITY;
    __syncthreads();
    for (int h = 1; h < 64; h *= 2) {
        if (threadIdx.x % (2 * h) == 0) {
            m[threadIdx.x] = fmaxf(m[threadIdx.x], m[threadIdx.x + h]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = m[0];
}
