// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: same-work
// The guarded tail runs in every block (no test of blockIdx.x): with one block it adds the
// leftover once, as the merged loop would, but a grid of two blocks adds it twice. The grid
// machine runs the kernel at a size with two blocks too, sees different sums there, and
// the loop stays chunked.
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
    if (threadIdx.x < n - 2 * half) {
        acc += x[2 * half + threadIdx.x];
    }
    atomicAdd(out, acc);
}
