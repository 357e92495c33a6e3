// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: grid-stride-loop: no integer parameter is the
// float4 chunks without the tail: the last n % 4 elements are never added (the fold covers
// 4 * (n / 4), which no parameter holds), so no one
// element per thread form computes the same.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 4 * 128), 32) block=128
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int n4 = n / 4;
    float acc = 0.0f;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < n4; c += blockDim.x * gridDim.x) {
        float4 q = reinterpret_cast<const float4*>(x)[c];
        acc += (q.x + q.y) + (q.z + q.w);
    }
    atomicAdd(out, acc);
}
