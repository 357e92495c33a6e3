// RUN: kltrans opt -p scalar-c-update
// The output of vector-c-update{ptr=q,val=v} on vector_auto_scale.cu (a store, no load).
// GATE: tests/data/workloads/scale
// Four consecutive outputs per thread (a named gid, the index written threadIdx.x
// first, #define for the block): a plain vector store, guarded at run time.
#define BLOCK 128
// kltrans: launch scale4 grid=ceil_div(n, 512) block=128
extern "C" __global__ void scale4(const float* x, float* y, float a, float b, int n)
{
    const int gid = threadIdx.x + BLOCK * blockIdx.x;
    const int base = gid * 4;
    if (base + 3 < n && (reinterpret_cast<unsigned long long>(y + base) & 15ull) == 0) {
        float4* q = reinterpret_cast<float4*>(y + base);
        float4 v;
        v.x = a * x[base + 0] + b;
        v.y = a * x[base + 1] + b;
        v.z = a * x[base + 2] + b;
        v.w = a * x[base + 3] + b;
        *q = v;
    } else {
        for (int j = 0; j < 4; ++j) {
            if (base + j < n) {
                float* p = y + base + j;
                *p = a * x[base + j] + b;
            }
        }
    }
}
