// RUN: kltrans opt -p 'unroll-stride'
// CHECK-SKIP: stride-loop: i is used outside one load
// The body weights x[i] by the index itself: i is needed after the load, so the
// iterations cannot be batched into a register array of loaded values.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (; i < (size_t)n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i] * (float)(i & 1);
    }
    atomicAdd(out, acc);
}
