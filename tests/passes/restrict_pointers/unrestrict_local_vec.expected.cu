// RUN: kltrans opt -p 'unrestrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/copy
// __restrict__ goes from the parameters and from the local vector views of them
// (locals=all, the default); the round trip names both locals.
// kltrans: launch copy_vec4 grid=ceil_div(n, 1024) block=256
extern "C" __global__ void copy_vec4(const float* x, float* y, int n)
{
    const float4* xv = reinterpret_cast<const float4*>(x);
    float4* yv = reinterpret_cast<float4*>(y);
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (4 * i + 3 < n) {
        yv[i] = xv[i];
    } else {
        for (int k = 4 * i; k < n; ++k) {
            y[k] = x[k];
        }
    }
}
