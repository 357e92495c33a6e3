// RUN: kltrans opt -p 'stream-hints{load=ldg,store=none,arrays=w}' --assume 'no_alias(*)'
// CHECK-SKIP: hint-type: points to the template parameter T
// The launch header names no instantiation: T may be a type __ldg has no overload for.
// kltrans: launch scale_cols grid=ceil_div(n, 256) block=256
template <class T>
__global__ void scale_cols(const T* x, const T* w, T* y, int n, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * w[i % cols];
}
