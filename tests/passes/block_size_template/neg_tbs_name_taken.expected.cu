// RUN: kltrans opt -p 'template-block-size{param=width}'
// CHECK-SKIP: fresh-name: already used
// The asked-for name is a parameter of the kernel already.
// kltrans: launch pad_rows grid=rows block=128
__global__ void pad_rows(const float* x, float* y, int rows, int width)
{
    for (int c = threadIdx.x; c < width; c += blockDim.x)
        y[blockIdx.x * width + c] = x[blockIdx.x * width + c];
}
