// RUN: kltrans opt -p 'unroll-stride{factor=UNROLL,braces=false}' --assume no_overflow
// GATE: corpus/reduce-sum
// The output of grid_stride/gs_sum_int_named.cu (fold=false, a named int stride): the
// index declared before the loop, a 32-bit int (no_overflow from the context) and a
// #define factor.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1024) block=256
#define UNROLL 4

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float acc = 0.0f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int nthreads = gridDim.x * blockDim.x;
    for (; i + (UNROLL - 1) * nthreads < n; i += UNROLL * nthreads) {
        float v[UNROLL];
        for (int u = 0; u < UNROLL; ++u)
            v[u] = x[i + u * nthreads];
        for (int u = 0; u < UNROLL; ++u)
            acc += v[u];
    }
    for (; i < n; i += nthreads) acc += x[i];
    atomicAdd(out, acc);
}
