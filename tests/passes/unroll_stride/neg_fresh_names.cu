// RUN: kltrans opt -p 'unroll-stride{var=u}'
// CHECK-SKIP: fresh-names: already used
// The requested inner loop variable u is a kernel parameter.
// kltrans: launch scaled_sum grid=min(ceil_div(n, 256), 264) block=256
__global__ void scaled_sum(const float* x, float* out, float u, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x) {
        const float v = x[i];
        acc += u * v;
    }
    atomicAdd(out, acc);
}
