// RUN: kltrans opt -p grid-accumulate
// CHECK-SKIP: reduction-ops: --assume reassoc
// A float sum folded per thread first comes out in another order: only the workload's
// tolerance allows it.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    atomicAdd(out, v);
}
