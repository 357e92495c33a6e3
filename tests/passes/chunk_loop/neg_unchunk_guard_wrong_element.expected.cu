// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: same-work
// The guarded tail adds the element after the leftover one (2 * half + 1 + threadIdx.x),
// not the leftover: merged into the loop it would add x[n - 1] where the chunks and the tail
// add x[n], so the grid machine sees different sums and the loop stays chunked.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 2 * 256), 64) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    int half = n >> 1;
    const float2* x2 = reinterpret_cast<const float2*>(x);
    float acc = 0.0f;
    for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < half; k += gridDim.x * blockDim.x) {
        float2 p = x2[k];
        acc += p.x + p.y;
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n - 2 * half) {
        acc += x[2 * half + threadIdx.x + 1];
    }
    atomicAdd(out, acc);
}
