// RUN: kltrans opt -p 'row-per-warp' --assume reassoc --assume 'no_alias(*)'
// GATE: corpus/layernorm
// kltrans: launch layernorm_naive grid=(ceil_div(rows, 256) * 32) block=256
// layernorm naive: per-row layer normalisation of a rows x cols bf16 matrix
// (row-major) with bf16 weight/bias and float32 statistics:
//   mean[r] = sum_c x[r, c] / cols
//   rstd[r] = 1 / sqrt(sum_c (x[r, c] - mean[r])^2 / cols + eps)
//   y[r, c] = (x[r, c] - mean[r]) * rstd[r] * weight[c] + bias[c]
// One thread per row, scalar loads and stores.
// launch: grid = ceil(rows/256), block = 256
#include <cuda_bf16.h>

extern "C" __global__ void layernorm_naive(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                           const __nv_bfloat16* bias, __nv_bfloat16* y,
                                           float* mean, float* rstd, int rows, int cols,
                                           float eps)
{
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows) {
        return;
    }
    const __nv_bfloat16* xr = x + (size_t)row * cols;
    __nv_bfloat16* yr = y + (size_t)row * cols;

    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        sum += __bfloat162float(xr[c]);
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, off);
    float mu = sum / (float)cols;

    float var = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        float d = __bfloat162float(xr[c]) - mu;
        var += d * d;
    }
    for (int off = 16; off > 0; off >>= 1) var += __shfl_xor_sync(0xffffffff, var, off);
    var = var / (float)cols;
    float rs = 1.0f / sqrtf(var + eps);

    for (int c = lane; c < cols; c += 32) {
        float v = (__bfloat162float(xr[c]) - mu) * rs;
        v = v * __bfloat162float(weight[c]) + __bfloat162float(bias[c]);
        yr[c] = __float2bfloat16(v);
    }
    if (lane == 0) mean[row] = mu;
    if (lane == 0) rstd[row] = rs;
}
