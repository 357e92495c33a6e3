// RUN: kltrans opt -p 'unroll-stride{factor=UNROLL}'
// CHECK-SKIP: factor-known: has no known value
// The factor names a constant the file does not define (it comes from the build line).
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (; i < (size_t)n; i += (size_t)blockDim.x * gridDim.x) {
        const float v = x[i];
        acc += v;
    }
    atomicAdd(out, acc);
}
