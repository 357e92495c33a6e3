// RUN: kltrans opt -p vector-c-update
// CHECK-SKIP: loop-form: the loop bound is `j < 8`, not `j < 4`
// Eight elements per loop: a float4 holds four.
// kltrans: launch k grid=ceil_div(n, 1024) block=128
extern "C" __global__ void k(const float* x, float* y, int n)
{
    const int base = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
    for (int j = 0; j < 8; ++j) {
        if (base + j < n) {
            float* p = y + base + j;
            *p = 2.0f * x[base + j];
        }
    }
}
