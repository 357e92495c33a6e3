// RUN: kltrans opt -p 'vectorize-split{reassoc=true}'
// CHECK-SKIP: split-loop: not one statement
// The body folds two values per element: the split handles one fold statement.
// kltrans: launch sum_and_max grid=min(ceil_div(n, 256), 264) block=256
__global__ void sum_and_max(const float* x, float* out, size_t n)
{
    float acc = 0.0f;
    float big = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
        big = fmaxf(big, x[i]);
    }
    atomicAdd(out, acc);
    atomicAdd(out + 1, big);
}
