// RUN: kltrans opt -p 'reroll-stride'
// CHECK-SKIP: unrolled-shape: the body is not
// The main loop folds its values in a different order (v[1] before v[0]) than the loop
// after it: it is not an unrolled copy, so removing it is not a re-roll.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 512), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)blockDim.x * gridDim.x;
    float acc = 0.0f;
    for (; i + 1 * nthreads < count; i += 2 * nthreads) {
        float v[2];
        for (int u = 0; u < 2; ++u) {
            v[u] = x[i + u * nthreads];
        }
        acc += v[1];
        acc += v[0];
    }
    for (; i < count; i += nthreads) {
        const float v = x[i];
        acc += v;
    }
    atomicAdd(out, acc);
}
