// RUN: kltrans opt -p unstage-shared
// CHECK-SKIP: read-values: the stored value reads p, which differs between threads
// The input pointer advances between the copy and the reads by an amount that differs
// between threads: no one index of p is the copied element at every read.
// kltrans: launch pairs grid=ceil_div(n, 64) block=64
__global__ void pairs(const float* p, float* out, int n)
{
    __shared__ float buf[64];
    const int t = threadIdx.x;
    p += blockIdx.x * 64;
    buf[t] = p[t];
    __syncthreads();
    p += t & 1;
    if (blockIdx.x * 64 + t < n)
        out[blockIdx.x * 64 + t] = buf[63 - t] + p[0];
}
