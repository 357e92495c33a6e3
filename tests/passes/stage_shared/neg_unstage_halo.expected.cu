// RUN: kltrans opt -p unstage-shared
// CHECK-SKIP: shared-copy: 2 stores
// A 1-D three-point stencil whose tile has a halo: the edge threads store a second
// element, so a read stands for one of two stores.
// kltrans: launch blur3 grid=ceil_div(n, 128) block=128
__global__ void blur3(const float* in, float* out, int n)
{
    __shared__ float s[130];
    int i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x + 1] = i < n ? in[i] : 0.0f;
    if (threadIdx.x == 0)
        s[0] = i > 0 ? in[i - 1] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = s[threadIdx.x] + s[threadIdx.x + 1];
}
