// RUN: kltrans opt -p 'unroll-stride'
// CHECK-SKIP: stride-loop: the loop body is not a block that loads
// The body folds x[i] directly, with no load into a variable first: there is nothing
// to batch into a register array.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (; i < (size_t)n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
