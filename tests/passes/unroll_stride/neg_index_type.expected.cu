// RUN: kltrans opt -p 'unroll-stride'
// CHECK-SKIP: index-type: may overflow
// A 32-bit index: i + 3 * stride may wrap near INT_MAX (no --assume no_overflow).
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (; i < n; i += blockDim.x * gridDim.x) {
        const float v = x[i];
        acc += v;
    }
    atomicAdd(out, acc);
}
