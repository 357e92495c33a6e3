// RUN: kltrans opt -p scalar-c-update
// CHECK-SKIP: fallback-general: the else loop is not the guarded element-by-element form
// The fallback loop has no bound check: it is only right where the vector branch is.
// kltrans: launch k grid=ceil_div(n, 512) block=128
extern "C" __global__ void k(const float* x, float* y, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (base + 3 < n && (reinterpret_cast<unsigned long long>(y + base) & 15ull) == 0) {
        float4* p = reinterpret_cast<float4*>(y + base);
        float4 v;
        v.x = x[base + 0];
        v.y = x[base + 1];
        v.z = x[base + 2];
        v.w = x[base + 3];
        *p = v;
    } else {
        for (int j = 0; j < 4; ++j)
            y[base + j] = x[base + j];
    }
}
