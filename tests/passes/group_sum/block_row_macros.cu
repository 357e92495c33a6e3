// RUN: kltrans opt -p 'group-sum{form=group,scratch=red,slot=1}' --assume 'no_alias(*)' --assume reassoc
// GATE: corpus/layernorm
// A block per row with a BLOCK macro, `tid` and `i`: the variance becomes a group sum
// through the file's helpers (the per-warp shared-slot warp sum) and the second scratch row.
// kltrans: launch layernorm grid=rows block=BLOCK
// One block per row (tid strides over the row); the mean is already a group sum, the
// variance is summed by every thread. (The mean's loop strides by blockDim.x: not a
// partial loop direct-group-sum takes, so its group sum stays on the round trip.)
#include <cuda_bf16.h>

#define BLOCK 128

__device__ __forceinline__ float ln_warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) {
        __shared__ float warp_slots[1024];
        const unsigned int slot = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        warp_slots[slot] = v;
        __syncwarp();
        v += warp_slots[slot ^ off];
        __syncwarp();
    }
    return v;
}

__device__ __forceinline__ float ln_group_sum(float v, int G, float* red)
{
    v = ln_warp_sum(v);
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        red[warp] = v;
    }
    __syncthreads();
    const int W = G >> 5;
    const int first = (warp / W) * W;
    v = red[first];
    for (int w = 1; w < W; ++w) {
        v += red[first + w];
    }
    return v;
}

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    __shared__ float red[2][BLOCK / 32];
    const int tid = threadIdx.x;
    const __nv_bfloat16* xr = x + (size_t)blockIdx.x * cols;
    __nv_bfloat16* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int i = tid; i < cols; i += blockDim.x) {
        s += __bfloat162float(xr[i]);
    }
    s = ln_group_sum(s, BLOCK, red[0]);
    const float mu = s / (float)cols;
    float sq = 0.0f;
    for (int i = tid; i < cols; i += BLOCK) {
        const float d = __bfloat162float(xr[i]) - mu;
        sq += d * d;
    }
    sq = 0.0f;
    for (int i = 0; i < cols; ++i) {
        const float d = __bfloat162float(xr[i]) - mu;
        sq += d * d;
    }
    const float rs = 1.0f / sqrtf(sq / (float)cols + eps);
    if (tid == 0) {
        mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = rs;
    }
    for (int i = tid; i < cols; i += BLOCK) {
        const float a = (__bfloat162float(xr[i]) - mu) * rs;
        yr[i] = __float2bfloat16(a * __bfloat162float(weight[i]) + __bfloat162float(bias[i]));
    }
}
