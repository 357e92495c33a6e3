// RUN: kltrans opt -p unstage-shared
// CHECK-SKIP: same-results: block machine
// Each slot is stored four times in a loop and the read sees the last store: the value
// names the loop's counter, which is not in scope (nor the same) at the read.
// kltrans: launch last_of_four grid=ceil_div(n, 128) block=128
__global__ void last_of_four(const float* x, float* y, int n)
{
    __shared__ float last[128];
    const int t = threadIdx.x;
    for (int k = 0; k < 4; ++k)
        last[t] = x[k * 128 + t];
    __syncthreads();
    if (blockIdx.x * 128 + t < n)
        y[blockIdx.x * 128 + t] = last[127 - t];
}
