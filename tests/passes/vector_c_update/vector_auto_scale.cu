// RUN: kltrans opt -p 'vector-c-update{ptr=q,val=v}'
// GATE: tests/data/workloads/scale
// Four consecutive outputs per thread (a named gid, the index written threadIdx.x
// first, #define for the block): a plain vector store, guarded at run time.
#define BLOCK 128
// kltrans: launch scale4 grid=ceil_div(n, 512) block=128
extern "C" __global__ void scale4(const float* x, float* y, float a, float b, int n)
{
    const int gid = threadIdx.x + BLOCK * blockIdx.x;
    const int base = gid * 4;
    for (int j = 0; j < 4; ++j) {
        if (base + j < n) {
            float* p = y + base + j;
            *p = a * x[base + j] + b;
        }
    }
}
