// RUN: kltrans opt -p 'vectorize-split'
// CHECK-SKIP: reassociation: rounds differently
// A float sum without --assume reassoc: pairwise lane sums round differently.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    float acc = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
