// RUN: kltrans opt -p shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: dynamic-smem: center_rows already has dynamic shared memory
// The kernel already keeps its per-warp partials in dynamic shared memory: a second
// extern buffer would start at the same address.
// kltrans: launch center_rows grid=rows block=128 smem=16
__global__ void center_rows(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float part[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += xr[c];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = s;
    __syncthreads();
    const float mean = (part[0] + part[1] + part[2] + part[3]) / cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = xr[c] - mean;
}
