// RUN: kltrans opt -p vector-c-update
// CHECK-SKIP: float-elem: the elements are double, not float
// double elements: four of them are 32 bytes, not a float4.
// kltrans: launch k grid=ceil_div(n, 512) block=128
extern "C" __global__ void k(const double* x, double* y, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    for (int j = 0; j < 4; ++j) {
        if (base + j < n) {
            double* p = y + base + j;
            *p = 2.0 * x[base + j] + *p;
        }
    }
}
