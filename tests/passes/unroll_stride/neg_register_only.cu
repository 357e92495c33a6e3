// RUN: kltrans opt -p 'unroll-stride'
// CHECK-SKIP: register-only: writes memory
// Each iteration also stores into y[0]: batching the loads of several iterations before the
// stores would read x before earlier iterations wrote y (x and y may alias).
// kltrans: launch prefix_copy grid=min(ceil_div(n, 256), 264) block=256
__global__ void prefix_copy(const float* x, float* y, float* out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x) {
        const float v = x[i];
        y[0] = v;
        acc += v;
    }
    atomicAdd(out, acc);
}
