// RUN: kltrans opt -p 'reroll-stride'
// CHECK-SKIP: invariant: the body assigns
// Both loops change their bound as they go: the main loop's look-ahead test does not
// describe the iterations of the loop after it.
// kltrans: launch shrink_sum grid=min(ceil_div(n, 512), 264) block=256
__global__ void shrink_sum(const float* x, float* out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)blockDim.x * gridDim.x;
    size_t m = n;
    float acc = 0.0f;
    for (; i + 1 * nthreads < m; i += 2 * nthreads) {
        float v[2];
        for (int u = 0; u < 2; ++u) {
            v[u] = x[i + u * nthreads];
        }
        for (int u = 0; u < 2; ++u) {
            acc += v[u];
            m -= 1;
        }
    }
    for (; i < m; i += nthreads) {
        const float v = x[i];
        acc += v;
        m -= 1;
    }
    atomicAdd(out, acc);
}
