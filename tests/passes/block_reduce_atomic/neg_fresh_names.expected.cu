// RUN: kltrans opt -p 'block-reduce-atomic{style=inline,lane=lane}'
// CHECK-SKIP: fresh-names: the name lane is already used
// The kernel already has a variable called lane: the in-place reduction would redeclare it.
// kltrans: launch lane_sum grid=ceil_div(n, 256) block=256
__global__ void lane_sum(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int acc = (i < n) ? x[i] * lane : 0;
    atomicAdd(out, acc);
}
