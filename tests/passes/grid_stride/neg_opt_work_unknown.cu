// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: covering-grid: cannot tell how many elements a thread was sized for
// The loop bound n is a copy of the parameter count, so the capped grid's divisor cannot
// be read as block * work: uncapping it alone would keep 256 elements per thread.
// kltrans: launch scale grid=min(ceil_div(count, 65536), 1024) block=256
__global__ void scale(const float* x, float* y, int count)
{
    int n = count;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = 3.0f * x[i];
    }
}
