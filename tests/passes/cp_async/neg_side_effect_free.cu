// RUN: kltrans opt -p 'cp-async' --arch 'sm_80'
// CHECK-SKIP: side-effect-free: has side effects
// The source index post-increments a cursor: the asynchronous form evaluates its operands
// differently, so it is left alone.
// kltrans: launch gather_rows grid=ceil_div(n, 128) block=128
extern "C" __global__ void gather_rows(const float* in, float* out, int n)
{
    __shared__ float s[128];
    int pos = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x] = in[pos++ % n];
    __syncthreads();
    if (pos - 1 < n) out[pos - 1] = s[127 - threadIdx.x] + s[threadIdx.x];
}
