// kltrans: launch cast_fp16_naive grid=ceil_div(n, 256) block=256
// cast_fp16 naive: y[i] = __float2half_rn(x[i] * scale), float32 in, float16 out.
// One thread per element, scalar loads and stores.
#include <cuda_fp16.h>

extern "C" __global__ void cast_fp16_naive(const float* x, __half* y, float scale, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __float2half_rn(x[i] * scale);
    }
}
