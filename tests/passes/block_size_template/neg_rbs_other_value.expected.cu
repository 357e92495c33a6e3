// RUN: kltrans opt -p 'runtime-block-size'
// CHECK-SKIP: launch: is launched as the block's 256 threads
// The template value (128 columns per block) is not the block size (256 threads).
// kltrans: launch add_cols<128> grid=ceil_div(n, 128) block=256
template <unsigned int COLS>
__global__ void add_cols(const float* x, float* y, int n)
{
    unsigned int i = blockIdx.x * COLS + threadIdx.x / 2;
    if (threadIdx.x % 2 == 0 && i < n)
        y[i] += x[i];
}
