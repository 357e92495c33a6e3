// RUN: kltrans opt -p scalar-path --assume 'no_alias(*)' --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: model: vector-path versions each loop with its own test and views, not one flag and hoisted views
// A warp per row whose float4 paths share one flag and views declared up front: the
// scalar loops stay, and the flag, the chunk count and the views (read only by the
// vector paths) go with them.
// kltrans: launch softmax_warp grid=ceil_div(rows, 4) block=128
__global__ void softmax_warp(const float* src, float* dst, int rows, int cols)
{
    const int row = blockIdx.x * 4 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* in = src + (size_t)row * cols;
    float* out = dst + (size_t)row * cols;
    const bool vec = (cols & 3) == 0;
    const int n4 = cols >> 2;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4* out4 = reinterpret_cast<float4*>(out);

    float hi = -INFINITY;
    if (vec) {
        for (int i = lane; i < n4; i += 32) {
            float4 v = in4[i];
            hi = fmaxf(hi, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
        }
    } else {
        for (int c = lane; c < cols; c += 32)
            hi = fmaxf(hi, in[c]);
    }
    for (int o = 16; o > 0; o >>= 1)
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));

    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32)
        sum += expf(in[c] - hi);
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);

    if (vec) {
        for (int i = lane; i < n4; i += 32) {
            float4 v = in4[i];
            v.x = expf(v.x - hi) / sum;
            v.y = expf(v.y - hi) / sum;
            v.z = expf(v.z - hi) / sum;
            v.w = expf(v.w - hi) / sum;
            out4[i] = v;
        }
    } else {
        for (int c = lane; c < cols; c += 32) {
            out[c] = expf(in[c] - hi) / sum;
        }
    }
}
