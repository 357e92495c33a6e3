// RUN: kltrans opt -p grid-accumulate --assume reassoc
// CHECK-SKIP: guarded-load: global index
// The load is indexed by the thread's index in its block, not in the grid.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int t = threadIdx.x;
    float v = t < n ? x[t] : 0.0f;
    atomicAdd(out, v);
}
