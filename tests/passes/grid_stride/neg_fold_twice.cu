// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: grid-stride-loop: is folded twice
// The pairs overlap: every thread adds x[i + 1] as well, so most elements are added twice.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 128), 64) block=128
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i + 1 < n; i += blockDim.x * gridDim.x) {
        acc += x[i] + x[i + 1];
    }
    atomicAdd(out, acc);
}
