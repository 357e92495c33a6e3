// Element types through typedefs, aliases and template parameters bound in the unit, and
// the pointers the model does not follow. The marks after "acc:" are read by
// tests/model/test_accesses.py (its docstring gives the format).
#include <cuda_fp16.h>

typedef float real;
using elem_t = __half;
typedef double* dptr;

struct Args { const float* data; int len; };

__global__ void typed(const real* x, elem_t* h, dptr d)
{
    d[threadIdx.x] = x[threadIdx.x];  // acc: write global d t=double idx tx; read global x t=float idx tx
    h[threadIdx.x] = __float2half(x[0]);  // acc: write global h t=__half idx tx; read global x idx 0
}

template <typename T>
__global__ void bound_by_launch(const T* in, T* out)
{
    out[threadIdx.x] = in[threadIdx.x] * in[threadIdx.x];  // acc: write global out t=double idx tx; read global in t=double idx tx; read global in idx tx
}

template <typename T>
__global__ void bound_twice(const T* in, T* out)
{
    out[threadIdx.x] = in[threadIdx.x];  // acc: write global out t=T idx tx; read global in t=T idx tx
    reinterpret_cast<float4*>(out)[1] = reinterpret_cast<const float4*>(in)[0];  // acc: write global out w? idx ? -- sizeof(T) unknown; read global in w? idx ? -- sizeof(T) unknown
}

template <typename T, int VEC>
__global__ void never_bound(const T* in, float* out)
{
    out[VEC * threadIdx.x] = in[threadIdx.x];  // acc: write global out idx VEC*tx; read global in t=T idx tx
}

__global__ void not_followed(float** tables, Args args, const Args* more, int which)
{
    float* t = tables[blockIdx.x];  // acc: read global tables t=float* idx bx
    t[threadIdx.x] = args.data[threadIdx.x];  // acc: write unknown ? w? idx ? -- loaded from memory; read global args.data t=float idx tx
    tables[which][threadIdx.x] = more->data[threadIdx.x] + more->len;  // acc: read global tables idx which; write unknown ? w? idx ? -- loaded from memory; read unknown ? w? idx ? -- through a pointer in global memory; read global more w? idx 0 -- the member data; read global more w? idx 0 -- the member len
}

union Lanes { float4 v; float f[4]; };

__global__ void row_pointers(const float* a, float* y, int rows, int cols)
{
    const float* rp[2];
    for (int r = 0; r < 2; ++r)
        rp[r] = a + (blockIdx.x * 2 + r) * cols;
    Lanes l;
    l.v = *reinterpret_cast<const float4*>(rp[1] + 4 * threadIdx.x);  // acc: read global a w4 idx ? -- which row pointer is unknown
    l.f[threadIdx.x % 4] += rp[0][threadIdx.x];  // acc: read global a idx ? -- which row pointer is unknown
    y[threadIdx.x] = l.f[0];  // acc: write global y idx tx
}

void launch_all(const double* a, double* b, const float* f, float* g, const __half* p, __half* q)
{
    bound_by_launch<double><<<1, 32>>>(a, b);
    bound_twice<float><<<1, 32>>>(f, g);
    bound_twice<__half><<<1, 32>>>(p, q);
}
