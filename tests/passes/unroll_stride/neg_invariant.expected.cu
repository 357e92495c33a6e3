// RUN: kltrans opt -p 'unroll-stride'
// CHECK-SKIP: invariant: the body assigns
// The body changes the stride: the look-ahead i + (F - 1) * stride would not be where
// later iterations go.
// kltrans: launch grow grid=min(ceil_div(n, 256), 264) block=256
__global__ void grow(const float* x, float* out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t stride = (size_t)blockDim.x * gridDim.x;
    float acc = 0.0f;
    for (; i < n; i += stride) {
        const float v = x[i];
        acc += v;
        stride += 1;
    }
    atomicAdd(out, acc);
}
