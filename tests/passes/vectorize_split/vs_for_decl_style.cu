// RUN: kltrans opt -p 'vectorize-split' --assume reassoc
// GATE: corpus/reduce-sum
// The textbook grid-stride reduction: the index declared in the loop header and spelled
// threadIdx.x + blockIdx.x * blockDim.x, the stride written out, an unbraced body.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 132) block=256
#define BLOCK 256

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t len = (size_t)(n < 0 ? 0 : n);
    float sum = 0.0f;
    for (size_t i = threadIdx.x + blockIdx.x * blockDim.x; i < len; i += blockDim.x * gridDim.x)
        sum += x[i];
    atomicAdd(out, sum);
}
