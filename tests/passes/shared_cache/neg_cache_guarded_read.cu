// RUN: kltrans opt -p shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: later-sweep: no array it reads is read again at the same element by a later loop
// The first sweep reads x only at the columns its test lets through: a cache filled at the
// top of its body would read every column the loop visits, past what the kernel reads.
// kltrans: launch odd_rows grid=rows block=128
__global__ void odd_rows(const float* x, float* y, int rows, int cols, int used)
{
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        if (c < used)
            s += xr[c];
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = c < used ? xr[c] - s : 0.0f;
}
