// RUN: kltrans opt -p 'unroll-stride'
// GATE: corpus/reduce-sum
// The body folds x[i] directly (no temporary): the inline form. The main loop loads F
// values into a register array (type from x's pointee), then folds them in order.
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
