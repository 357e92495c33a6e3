// kltrans: launch block_max grid=ceil_div(ceil_div(n, 256), 128) block=128
// One thread per run of 256 values.
extern "C" __global__ void block_max(const float* x, float* out, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r * 256 >= n) return;
    float m = -INFINITY;
    for (int k = r * 256; k < n && k < r * 256 + 256; k++)
        m = fmaxf(m, x[k]);
    out[r] = m;
}
