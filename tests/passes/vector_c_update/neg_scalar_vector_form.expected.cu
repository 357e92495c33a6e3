// RUN: kltrans opt -p scalar-c-update
// CHECK-SKIP: vector-form: the vector branch is not what vector-c-update writes
// The vector branch scales by 2 where the loop does not: the branches differ, so the
// loop cannot stand for both.
// kltrans: launch k grid=ceil_div(n, 512) block=128
extern "C" __global__ void k(const float* x, float* y, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (base + 3 < n && (reinterpret_cast<unsigned long long>(y + base) & 15ull) == 0) {
        float4* p = reinterpret_cast<float4*>(y + base);
        float4 v;
        v.x = 2.0f * x[base + 0];
        v.y = 2.0f * x[base + 1];
        v.z = 2.0f * x[base + 2];
        v.w = 2.0f * x[base + 3];
        *p = v;
    } else {
        for (int j = 0; j < 4; ++j) {
            if (base + j < n) {
                float* p = y + base + j;
                *p = x[base + j];
            }
        }
    }
}
