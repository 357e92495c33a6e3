// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: grid-stride-loop: one element per thread already
// Already one element per thread: nothing to undo (the fold's naive form).
// kltrans: launch reduce_sum grid=ceil_div(n, 128) block=128
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float acc = 0.0f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
