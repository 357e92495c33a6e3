// kltrans: launch stencil1d_3pt_naive grid=ceil_div(n, 256) block=256
// stencil1d_3pt naive: y[i] = a * x[i-1] + b * x[i] + c * x[i+1] (float32), with zero
// boundary: x[-1] and x[n] read as 0. One thread per output element, scalar loads.
extern "C" __global__ void stencil1d_3pt_naive(const float* x, float* y, float a, float b,
                                               float c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = i > 0 ? x[i - 1] : 0.0f;
        float right = i + 1 < n ? x[i + 1] : 0.0f;
        y[i] = a * left + b * x[i] + c * right;
    }
}
