// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: same-work: chunk
// The chunk stores lanes y and z swapped, so it is not the tail's body four times over:
// merging would change the output.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = blockDim.x * gridDim.x;
    const int n4 = n / 4;
    for (int i = tid; i < n4; i += stride) {
        float4 v = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        y[4 * i] = a * v.x + b;
        y[4 * i + 1] = a * v.z + b;
        y[4 * i + 2] = a * v.y + b;
        y[4 * i + 3] = a * v.w + b;
    }
    int j = 4 * n4 + tid;
    if (j < n) {
        y[j] = a * x[j] + b;
    }
}
