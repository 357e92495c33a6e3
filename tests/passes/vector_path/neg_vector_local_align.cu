// RUN: kltrans opt -p 'vector-path{align=none}' --assume 'no_alias(*)'
// CHECK-SKIP: aligned: may start anywhere in an allocation
// Without the run-time alignment test, the row pointers (x plus a multiple of cols) are
// 16-byte aligned only when cols is: only kernel parameters are known to be.
// kltrans: launch scale_rows grid=rows block=128
__global__ void scale_rows(const float* x, float* y, float a, int rows, int cols)
{
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = a * in[c];
}
