// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: sole-work: is not declared before the loop with the identity 0
// The per-thread value starts at 1.0f: with fewer threads, fewer 1.0f would be added,
// so the atomic after the guard does not only publish a fold.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 1.0f;
    if (i < n) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
