// RUN: kltrans opt -p grid-accumulate --assume reassoc
// CHECK-SKIP: guarded-load: a block covers (2 * blockDim.x) elements, not the 2 loads
// The second load is two blocks from the first, not one: not a group the pass reads (a
// block covers 2 blocks' worth of elements with a hole).
// kltrans: launch gap_sums grid=ceil_div(n, 2 * 128) block=128
__global__ void gap_sums(const float* in, float* out, int n)
{
    __shared__ float part[128];
    int i = blockIdx.x * (2 * blockDim.x) + threadIdx.x;
    float acc = i < n ? in[i] : 0.0f;
    if (i + 2 * blockDim.x < n)
        acc += in[i + 2 * blockDim.x];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(out, part[0]);
}
