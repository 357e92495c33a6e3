// RUN: kltrans opt -p scalar-path
// CHECK-SKIP: versioned: neither moves memory through a vector view nor holds vectors
// Both branches move single floats (a clamp chosen by a flag): nothing to strip.
// kltrans: launch clamp grid=ceil_div(n, 256) block=256
__global__ void clamp(const float* x, float* y, int n, int lo_only)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (lo_only) {
        y[i] = fmaxf(x[i], 0.0f);
    } else {
        y[i] = fminf(fmaxf(x[i], 0.0f), 1.0f);
    }
}
