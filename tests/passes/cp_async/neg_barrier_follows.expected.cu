// RUN: kltrans opt -p 'cp-async' --arch 'sm_80'
// CHECK-SKIP: barrier-follows: before a __syncthreads() follows
// Each thread reads its own element back before the barrier: with an asynchronous copy the
// placement of the wait would matter, so the run must be followed by the barrier.
// kltrans: launch diff_neighbour grid=ceil_div(n, 256) block=256
extern "C" __global__ void diff_neighbour(const float* x, float* y, int n)
{
    __shared__ float t[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    t[threadIdx.x] = (i < n) ? x[i] : 0.0f;
    const float mine = t[threadIdx.x];
    __syncthreads();
    const float next = threadIdx.x + 1 < 256 ? t[threadIdx.x + 1] : 0.0f;
    if (i < n) y[i] = next - mine;
}
