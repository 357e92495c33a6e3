// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: covering-grid: grid=min(ceil_div(count, 65536), 1024) covers count, not the loop bound n
// The loop bound n is a copy of the parameter count, so the grid covers another size than the loop bound:
// uncapping it alone would keep 256 elements per thread.
// kltrans: launch scale grid=min(ceil_div(count, 65536), 1024) block=256
__global__ void scale(const float* x, float* y, int count)
{
    int n = count;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = 3.0f * x[i];
    }
}
