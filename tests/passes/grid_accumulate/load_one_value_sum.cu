// RUN: kltrans opt -p load-one-value --assume reassoc
// GATE: corpus/reduce-sum
// A sum folded per thread over a capped grid, one atomic per thread: one element per
// thread again, the grid uncapped.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int k = i; k < n; k += blockDim.x * gridDim.x) {
        v += x[k];
    }
    atomicAdd(out, v);
}
