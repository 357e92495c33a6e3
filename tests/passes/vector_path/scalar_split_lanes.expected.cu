// RUN: kltrans opt -p scalar-path --assume reassoc --assume 'no_alias(*)'
// ROUNDTRIP: model: vector-path writes its own test and views, not the flag and the gathered lanes
// Two versions on one flag after another pass split the vector loads into scalars: the
// first if's float4 now gathers four floats (no vector view left, the lanes still in a
// float4 register), the second still loads through one. Both are the vector version and
// go together; the sum of squares comes out the same whichever runs.
// kltrans: launch sumsq_scale grid=rows block=128 smem=128*4
__global__ void sumsq_scale(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float part[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = xr[c];
        acc += v * v;
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    float total = 0.0f;
    for (int k = 0; k < blockDim.x; k++)
        total += part[k];
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = xr[c] * total;
}
