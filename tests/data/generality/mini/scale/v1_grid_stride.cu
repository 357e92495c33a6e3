// kltrans: launch scale grid=min(ceil_div(n, 256), 1024) block=256
__global__ void scale(const float* x, float* y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = 3.0f * x[i];
    }
}
