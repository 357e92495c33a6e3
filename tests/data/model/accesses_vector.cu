// Vector views of scalar arrays, in every spelling: the width counts elements of the
// base's type and the index is in those elements. The marks after "acc:" are read by
// tests/model/test_accesses.py (its docstring gives the format).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

struct __align__(16) Quad { float a, b, c, d; };

__global__ void scale_vec(const float* __restrict__ x, float* __restrict__ y, float s, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    float4 v = reinterpret_cast<const float4*>(x)[i];  // acc: read global x w4 idx 4*bx*bdx + 4*tx
    v.x *= s;
    reinterpret_cast<float4*>(y)[i] = v;  // acc: write global y w4 idx 4*bx*bdx + 4*tx
    float4 w = reinterpret_cast<const float4*>(&x[4 * i])[0];  // acc: read global x w4 idx 4*bx*bdx + 4*tx
    *reinterpret_cast<float4*>(&y[4 * i]) = w;  // acc: write global y w4 idx 4*bx*bdx + 4*tx
    ((float4*)y)[i] = ((const float4*)x)[i + 1];  // acc: write global y w4 idx 4*bx*bdx + 4*tx; read global x w4 idx 4*bx*bdx + 4*tx + 4
    const float4* x4 = reinterpret_cast<const float4*>(x);
    auto* y4 = reinterpret_cast<float4*>(y) + 1;
    y4[i] = x4[i];  // acc: write global y w4 idx 4*bx*bdx + 4*tx + 4; read global x w4 idx 4*bx*bdx + 4*tx
    float4 c = __ldg(x4 + i);  // acc: read global x w4 hint=ldg idx 4*bx*bdx + 4*tx
    Quad q = reinterpret_cast<const Quad*>(x)[i];  // acc: read global x w4 idx 4*bx*bdx + 4*tx
    reinterpret_cast<Quad*>(y)[2 * i] = q;  // acc: write global y w4 idx 8*bx*bdx + 8*tx
    y[0] = c.x + v.y;  // acc: write global y idx 0
}

__global__ void half_pairs(const __half* a, __half* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 h = reinterpret_cast<const __half2*>(a)[i];  // acc: read global a t=__half w2 idx 2*bx*bdx + 2*tx
    reinterpret_cast<__half2*>(b)[i] = h;  // acc: write global b w2 idx 2*bx*bdx + 2*tx
    int4 raw = reinterpret_cast<const int4*>(a)[i];  // acc: read global a w8 idx 8*bx*bdx + 8*tx
    reinterpret_cast<int4*>(b)[i + 1] = raw;  // acc: write global b w8 idx 8*bx*bdx + 8*tx + 8
    uint2 u = *reinterpret_cast<const uint2*>(a + 4 * i);  // acc: read global a w4 idx 4*bx*bdx + 4*tx
    *(uint2*)(b + 4 * i) = u;  // acc: write global b w4 idx 4*bx*bdx + 4*tx
}

__global__ void bf16_pairs(const __nv_bfloat16* src, __nv_bfloat16* dst)
{
    const __nv_bfloat162* s2 = reinterpret_cast<const __nv_bfloat162*>(src) + blockIdx.x * 64;
    __nv_bfloat162* d2 = (__nv_bfloat162*)dst;
    d2[threadIdx.x] = s2[threadIdx.x];  // acc: write global dst w2 idx 2*tx; read global src w2 idx 128*bx + 2*tx
    __nv_bfloat162* back = d2 + 1;
    float* f = reinterpret_cast<float*>(back);
    f[threadIdx.x] = 0.f;  // acc: write global dst w2 idx 2 + 2*tx
}

__global__ void views_of_vectors(const float4* v4, float* out)
{
    const float* flat = reinterpret_cast<const float*>(v4);
    out[threadIdx.x] = flat[threadIdx.x] + v4[threadIdx.x].y;  // acc: write global out idx tx; read global v4 w? idx ? -- a float is a quarter of a float4; read global v4 idx tx
}
