// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// Per-block views of the parameters declared in the body get __restrict__ too (never const).
// kltrans: launch scale grid=ceil_div(n, BLOCK) block=BLOCK
#define BLOCK 256

extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n)
{
    const float* __restrict__ src = x + blockIdx.x * BLOCK;
    float* __restrict__ dst = y + blockIdx.x * BLOCK;
    const int tid = threadIdx.x;
    if (blockIdx.x * BLOCK + tid < n) {
        dst[tid] = a * src[tid] + b;
    }
}
