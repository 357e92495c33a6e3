// RUN: kltrans opt -p 'reroll-stride'
// CHECK-SKIP: register-only: writes memory
// The unrolled form of a loop that also writes y: the main loop issued its loads before
// the stores, which is not the order of the loop after it when x and y overlap.
// kltrans: launch copy_sum grid=min(ceil_div(n, 512), 264) block=256
__global__ void copy_sum(const float* x, float* y, float* out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)blockDim.x * gridDim.x;
    float acc = 0.0f;
    for (; i + 1 * nthreads < n; i += 2 * nthreads) {
        float v[2];
        for (int u = 0; u < 2; ++u) {
            v[u] = x[i + u * nthreads];
        }
        for (int u = 0; u < 2; ++u) {
            y[0] = v[u];
            acc += v[u];
        }
    }
    for (; i < n; i += nthreads) {
        const float v = x[i];
        y[0] = v;
        acc += v;
    }
    atomicAdd(out, acc);
}
