// RUN: kltrans opt -p 'runtime-block-size'
// The block size is the kernel's only template parameter: the template goes, and the
// launch names the kernel alone.
// kltrans: launch copy_rows grid=rows block=64
__global__ void copy_rows(const float* src, float* dst, int rows, int cols)
{
    const float* s = src + (size_t)blockIdx.x * cols;
    float* d = dst + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        d[c] = s[c];
}
