// RUN: kltrans opt -p 'runtime-block-size'
// CHECK-SKIP: value-reads: an array size
// The parameter sizes a shared array: blockDim.x is not a constant there.
// kltrans: launch tile_sum<128> grid=ceil_div(n, 128) block=128
template <unsigned int BLOCK>
__global__ void tile_sum(const float* x, float* out, int n)
{
    __shared__ float tile[BLOCK];
    unsigned int i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (unsigned int k = 0; k < BLOCK; ++k)
            s += tile[k];
        out[blockIdx.x] = s;
    }
}
