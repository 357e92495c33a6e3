// RUN: kltrans opt -p 'stream-hints{load=ldg,store=none,arrays=w}' --assume 'no_alias(*)'
// A template kernel: w points to T, which the launch header instantiates as float, the
// instantiation kltrans compiles and runs, so __ldg has its overload.
// kltrans: launch scale_cols<float> grid=ceil_div(n, 256) block=256
template <class T>
__global__ void scale_cols(const T* x, const T* w, T* y, int n, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * w[i % cols];
}
