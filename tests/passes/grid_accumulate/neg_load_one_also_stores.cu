// RUN: kltrans opt -p load-one-value --assume reassoc
// CHECK-SKIP: grid-fold: also stores
// The loop also scales each element in place: the kernel is not only a fold.
// kltrans: launch scale_sum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void scale_sum(float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i];
    float v = 0.0f;
    for (int k = i; k < n; k += blockDim.x * gridDim.x) {
        v += x[k];
    }
    atomicAdd(out, v);
}
