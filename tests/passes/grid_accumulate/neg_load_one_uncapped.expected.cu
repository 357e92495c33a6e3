// RUN: kltrans opt -p load-one-value --assume reassoc
// CHECK-SKIP: capped-grid: is not a cap
// The grid already gives every element a thread: there is no cap to lift.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int k = i; k < n; k += blockDim.x * gridDim.x) {
        v += x[k];
    }
    atomicAdd(out, v);
}
