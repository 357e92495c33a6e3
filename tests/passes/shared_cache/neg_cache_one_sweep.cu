// RUN: kltrans opt -p shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: later-sweep: no later loop runs over the same elements
// One sweep over the row: nothing is read twice.
// kltrans: launch scale_rows grid=rows block=128
__global__ void scale_rows(const float* x, float* y, int rows, int cols)
{
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = 2.0f * xr[c];
}
