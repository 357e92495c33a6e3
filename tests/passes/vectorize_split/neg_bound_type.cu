// RUN: kltrans opt -p 'vectorize-split{reassoc=true}'
// CHECK-SKIP: bound-type: is int
// The bound is the int parameter: a negative n would become a huge size_t in the head's
// clamp and the vector count.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float acc = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
