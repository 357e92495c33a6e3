// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: chunk-form
// The guarded tail reads two elements (the leftover one and the scale s[0]): which of them
// is the element the merged loop walks is not read from the accesses, so the loop stays
// chunked (a tail through `int j = ...; if (j < n)` names its element).
// kltrans: launch reduce_sum grid=min(ceil_div(n, 2 * 256), 64) block=256
extern "C" __global__ void reduce_sum(const float* x, const float* s, float* out, int n)
{
    int half = n >> 1;
    const float2* x2 = reinterpret_cast<const float2*>(x);
    float acc = 0.0f;
    for (int k = threadIdx.x + blockIdx.x * blockDim.x; k < half; k += gridDim.x * blockDim.x) {
        float2 p = x2[k];
        acc += (p.x + p.y) * s[0];
    }
    if (blockIdx.x == 0 && threadIdx.x < n - 2 * half) {
        acc += x[2 * half + threadIdx.x] * s[0];
    }
    atomicAdd(out, acc);
}
