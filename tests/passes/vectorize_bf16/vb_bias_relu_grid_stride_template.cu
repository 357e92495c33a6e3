// RUN: kltrans opt -p "vectorize-bf16{flag=aligned,unpack='load_unpack<1>',temps=xs+bs,xv=x16,nv=n16,packed=out,h=pair,inner-unroll=false}" --assume 'no_alias(*)' --assume reassoc
// A grid-stride element-wise map with a templated unpack helper (no workload: not gated).
// kltrans: launch bias_relu grid=ceil_div(n, BLOCK) block=BLOCK
// element-wise y = relu(x + b) over bf16, a grid-stride loop
#include <cuda_bf16.h>
#include <stdint.h>

#define BLOCK 256

template <int MODE>
__device__ __forceinline__ void load_unpack(uint4 raw, float* f)
{
    const unsigned int w[4] = {raw.x, raw.y, raw.z, raw.w};
    for (int j = 0; j < 4; ++j) {
        if (MODE == 0) {
            f[2 * j] = __uint_as_float(w[j] << 16);
            f[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
        } else {
            const float2 t = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[j]));
            f[2 * j] = t.x;
            f[2 * j + 1] = t.y;
        }
    }
}

extern "C" __global__ void bias_relu(const __nv_bfloat16* __restrict__ x,
                                     const __nv_bfloat16* __restrict__ b,
                                     __nv_bfloat16* __restrict__ y, int n)
{
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const bool aligned = (n & 7) == 0 && (((uintptr_t)x | (uintptr_t)b | (uintptr_t)y) & 15) == 0;
    for (int i = gid; i < n; i += blockDim.x * gridDim.x) {
        y[i] = __float2bfloat16(fmaxf(__bfloat162float(x[i]) + __bfloat162float(b[i]), 0.0f));
    }
}
