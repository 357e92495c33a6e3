// RUN: kltrans opt -p load-one-value --assume reassoc
// CHECK-SKIP: same-results
// The thread's sum is squared after the loop: with one element per thread the kernel
// would add squares instead of squaring sums (the grid machine runs the loop at
// a grid of 2 blocks).
// kltrans: launch sum_squares grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void sum_squares(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int k = i; k < n; k += blockDim.x * gridDim.x) {
        v += x[k];
    }
    if (i < n) atomicAdd(out, v * v);
}
