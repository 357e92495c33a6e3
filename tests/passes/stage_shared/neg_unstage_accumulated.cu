// RUN: kltrans opt -p unstage-shared
// CHECK-SKIP: shared-copy: 2 stores, 1 of them not plain
// The slot is stored, then added to: a read-modify-write holds no plain copy.
// kltrans: launch bumped grid=ceil_div(n, 64) block=64
__global__ void bumped(const float* x, float* y, int n)
{
    __shared__ float s[64];
    const int t = threadIdx.x, i = blockIdx.x * 64 + t;
    s[t] = i < n ? x[i] : 0.0f;
    s[t] += 1.0f;
    __syncthreads();
    if (i < n)
        y[i] = s[63 - t];
}
