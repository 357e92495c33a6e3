// kltrans: launch scale grid=ceil_div(n, 256) block=256
__global__ void scale(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 3.0f * x[i];
    }
}
