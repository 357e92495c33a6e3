// RUN: kltrans opt -p cg-reduce --assume reassoc
// CHECK-SKIP: tile-of-32: no cooperative-groups tile
// __shfl_down_sync names no tile: cg::reduce takes one, and the pass does not make it.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}
