// RUN: kltrans opt -p vector-path --assume 'no_alias(*)'
// CHECK-SKIP: order: --assume reassoc
// The block's sum is folded in another order by float4 chunks: without leave to
// reassociate float sums the loop is kept.
// kltrans: launch row_sum grid=rows block=128
__global__ void row_sum(const float* x, float* y, int rows, int cols)
{
    __shared__ float part[128];
    const float* in = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += in[c];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int h = 64; h > 0; h >>= 1) {
        if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}
