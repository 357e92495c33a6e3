// RUN: kltrans opt -p 'grow-block{threads=512}'
// Four elements per thread, a grid-stride of the block: 1024 elements per block of 256,
// 2048 per block of 512.
// kltrans: launch scale4 grid=ceil_div(n, 2048) block=512
__global__ void scale4(const float* x, float* y, int n)
{
    int base = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int k = 0; k < 4; ++k) {
        int i = base + k * blockDim.x;
        if (i < n) y[i] = 2.0f * x[i];
    }
}
