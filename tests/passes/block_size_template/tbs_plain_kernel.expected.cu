// RUN: kltrans opt -p 'template-block-size{param=THREADS}'
// A kernel that is no template yet: it becomes one on the block size alone, and the
// grid-stride loop's step is THREADS * gridDim.x.
// kltrans: launch scale_all<128> grid=min(ceil_div(n, 128), 512) block=128
template <unsigned int THREADS>
__global__ void scale_all(const float* x, float* y, float a, int n)
{
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += THREADS * gridDim.x)
        y[i] = a * x[i];
}
