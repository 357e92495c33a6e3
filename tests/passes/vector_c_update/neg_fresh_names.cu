// RUN: kltrans opt -p vector-c-update{val=c}
// CHECK-SKIP: fresh-names: the name c is already used around or in the loop
// The float4 value would shadow the loop's own `c` (the scale factor).
// kltrans: launch k grid=ceil_div(n, 512) block=128
extern "C" __global__ void k(const float* x, float* y, float c, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    for (int j = 0; j < 4; ++j) {
        if (base + j < n) {
            float* p = y + base + j;
            *p = c * x[base + j];
        }
    }
}
