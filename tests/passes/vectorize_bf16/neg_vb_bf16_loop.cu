// RUN: kltrans opt -p 'vectorize-bf16' --assume 'no_alias(*)' --assume reassoc --site 3
// CHECK-SKIP: bf16-loop: the store's value is not `__float2bfloat16(E)`
// kltrans: launch layernorm grid=rows block=128
#include <cuda_bf16.h>
#include <stdint.h>

// 8 bf16 (one uint4) to float32: a bf16 is the upper half of a float
__device__ __forceinline__ void unpack8(uint4 raw, float* f)
{
    const unsigned int w[4] = {raw.x, raw.y, raw.z, raw.w};
    for (int j = 0; j < 4; ++j) {
        f[2 * j] = __uint_as_float(w[j] << 16);
        f[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
    }
}

// sum over the block (blockDim.x == 128)
__device__ float block_sum(float v, float* red)
{
    red[threadIdx.x] = v;
    __syncthreads();
    for (int s = 64; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            red[threadIdx.x] += red[threadIdx.x + s];
        }
        __syncthreads();
    }
    v = red[0];
    __syncthreads();
    return v;
}

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    __shared__ float red[128];
    const int row = blockIdx.x;
    const __nv_bfloat16* xr = x + (size_t)row * cols;
    __nv_bfloat16* yr = y + (size_t)row * cols;
    const bool vec_ok = (cols & 7) == 0 &&
        (((uintptr_t)x | (uintptr_t)y | (uintptr_t)weight | (uintptr_t)bias) & 15) == 0;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        s += __bfloat162float(xr[c]);
    }
    const float mu = block_sum(s, red) / (float)cols;
    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = __bfloat162float(xr[c]) - mu;
        sq += d * d;
    }
    const float rs = 1.0f / sqrtf(block_sum(sq, red) / (float)cols + eps);
    if (threadIdx.x == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        yr[c] = xr[c];
    }
}
