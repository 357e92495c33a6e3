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
    size_t head = ((16u - ((size_t)x & 15u)) & 15u) / sizeof(float);
    if (head > len) {
        head = len;
    }
    const size_t nvec = (len - head) / 4;
    const size_t tail_start = head + nvec * 4;
    const float4* xv = reinterpret_cast<const float4*>(x + head);
    for (size_t i = threadIdx.x + blockIdx.x * blockDim.x; i < nvec; i += blockDim.x * gridDim.x) {
        const float4 v = xv[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    if (threadIdx.x + blockIdx.x * blockDim.x < head) {
        sum += x[threadIdx.x + blockIdx.x * blockDim.x];
    }
    if (threadIdx.x + blockIdx.x * blockDim.x < len - tail_start) {
        sum += x[tail_start + threadIdx.x + blockIdx.x * blockDim.x];
    }
    atomicAdd(out, sum);
}
