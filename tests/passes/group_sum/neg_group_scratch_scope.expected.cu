// RUN: kltrans opt -p 'group-sum{form=group,warp=warp_sum,group=group_sum,scratch=red,slot=-1,warp_form=shfl,define=helpers}' --assume 'no_alias(*)' --assume reassoc
// CHECK-SKIP: sum-form: the scratch red is not declared where layernorm can use it
// No scratch array is declared and define=helpers does not write one: the group sum
// would name an undeclared red (found by the H200 run of layernorm@root).
// kltrans: launch layernorm grid=ceil_div(rows, 2) block=128
// Two rows per block, 64 threads per row: each thread folds its strided slice of the row.
#include <cuda_bf16.h>

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    const int row = blockIdx.x * 2 + threadIdx.x / 64;
    const int gt = threadIdx.x % 64;
    const bool active = row < rows;
    const int n = active ? cols : 0;
    const __nv_bfloat16* xr = x + (size_t)(active ? row : 0) * cols;
    float s = 0.0f;
    for (int c = gt; c < n; c += 64) {
        s += __bfloat162float(xr[c]);
    }
    s = 0.0f;
    for (int c = 0; c < n; ++c) {
        s += __bfloat162float(xr[c]);
    }
    const float mu = s / (float)cols;
    float var = 0.0f;
    for (int c = 0; c < n; ++c) {
        const float d = __bfloat162float(xr[c]) - mu;
        var += d * d;
    }
    const float rs = 1.0f / sqrtf(var / (float)cols + eps);
    if (active && gt == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    for (int c = gt; c < n; c += 64) {
        const float v = (__bfloat162float(xr[c]) - mu) * rs;
        y[(size_t)row * cols + c] = __float2bfloat16(v * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
    }
}
