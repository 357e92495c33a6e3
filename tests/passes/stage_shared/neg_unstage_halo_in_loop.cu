// RUN: kltrans opt -p unstage-shared
// CHECK-SKIP: shared-copy: one of them in a loop
// The halo is loaded by a loop of the first threads: several stores are read by thread
// index only when each runs once, outside loops.
// kltrans: launch blur5 grid=ceil_div(n, 128) block=128
__global__ void blur5(const float* in, float* out, int n)
{
    __shared__ float s[132];
    int i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x + 2] = i < n ? in[i] : 0.0f;
    for (int h = threadIdx.x; h < 2; h += 128)
        s[h] = i - 2 + h >= 0 ? in[i - 2 + h] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = s[threadIdx.x] + s[threadIdx.x + 2];
}
