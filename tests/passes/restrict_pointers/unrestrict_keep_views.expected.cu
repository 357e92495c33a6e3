// RUN: kltrans opt -p 'unrestrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// Restricted parameters and two unrestricted views of x (as the scan expert's counter and
// status words of scratch): only the parameters change, and restrict-pointers, which
// leaves two views of one parameter alone, gives them back.
// kltrans: launch scale grid=ceil_div(n, BLOCK) block=BLOCK
#define BLOCK 256
#define HALF (BLOCK / 2)

extern "C" __global__ void scale(const float* x, float* y, float a,
                                 float b, int n)
{
    const float* lo = x + blockIdx.x * BLOCK;
    const float* hi = x + blockIdx.x * BLOCK + HALF;
    const int tid = threadIdx.x;
    if (blockIdx.x * BLOCK + tid < n) {
        y[blockIdx.x * BLOCK + tid] = a * (tid < HALF ? lo[tid] : hi[tid - HALF]) + b;
    }
}
