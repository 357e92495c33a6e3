// RUN: kltrans opt -p load-one-value --assume reassoc
// CHECK-SKIP: accumulating-loop: global index
// The loop starts at the thread's index in its block: every block folds the same elements.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int t = threadIdx.x;
    float v = 0.0f;
    for (int k = t; k < n; k += blockDim.x * gridDim.x) {
        v += x[k];
    }
    atomicAdd(out, v);
}
