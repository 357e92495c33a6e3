// RUN: kltrans opt -p 'cp-async' --arch 'sm_80'
// CHECK-SKIP: zero-fill: is not a zero literal
// A block maximum pads with -1e30f: cp.async can only fill with zero bytes.
// kltrans: launch block_max grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_max(const float* x, float* out, int n)
{
    __shared__ float sm[256];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * 256 + tid;
    sm[tid] = i < n ? x[i] : -1e30f;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (tid < s) sm[tid] = fmaxf(sm[tid], sm[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sm[0];
}
