// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// Two views of x (the two halves of the block's slice) may overlap as far as kltrans can
// tell: they stay unrestricted; the parameters and the sole view of y are restricted.
// kltrans: launch scale grid=ceil_div(n, BLOCK) block=BLOCK
#define BLOCK 256
#define HALF (BLOCK / 2)

extern "C" __global__ void scale(float* x, float* y, float a, float b, int n)
{
    const float* lo = x + blockIdx.x * BLOCK;
    const float* hi = x + blockIdx.x * BLOCK + HALF;
    float* dst = y + blockIdx.x * BLOCK;
    const int tid = threadIdx.x;
    if (blockIdx.x * BLOCK + tid < n) {
        dst[tid] = a * (tid < HALF ? lo[tid] : hi[tid - HALF]) + b;
    }
}
