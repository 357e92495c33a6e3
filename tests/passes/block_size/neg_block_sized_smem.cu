// RUN: kltrans opt -p 'shrink-block{threads=64}'
// CHECK-SKIP: same-results: does not do the same
// A tree over a shared array of the block's 128 threads: 64 threads leave half of it unset.
// kltrans: launch blocksum grid=ceil_div(n, 128) block=128
__global__ void blocksum(const float* x, float* y, int n)
{
    __shared__ float s[128];
    s[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = s[0];
}
