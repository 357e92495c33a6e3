// RUN: kltrans opt -p 'cp-async' --arch 'sm_80'
// CHECK-SKIP: element-size: converts double to float
// The tile holds floats converted from double input: cp.async copies bytes, it cannot convert.
// kltrans: launch block_sum_d2f grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_sum_d2f(const double* x, float* out, int n)
{
    __shared__ float buf[256];
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = gid < n ? x[gid] : 0.0f;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}
