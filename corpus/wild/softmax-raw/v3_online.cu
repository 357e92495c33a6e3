// kltrans: launch softmax_online grid=ceil_div(rows, WARPS_PER_BLOCK) block=WARPS_PER_BLOCK*32
// Row softmax, one warp per row, online normalizer: each lane reads its part of the
// row once, keeping a running maximum and a sum of exp(x - running max) that is
// rescaled whenever the maximum grows. The lanes' (max, sum) pairs are merged with a
// __shfl_xor_sync butterfly, then a second pass writes exp(x - max) / sum.
// Two reads of x instead of three.

#define WARPS_PER_BLOCK 8
#define FULL_MASK 0xffffffffu

// fold the pair (other_max, other_sum) into (m, s); an empty pair has max -inf, sum 0
__device__ __forceinline__ void online_merge(float& m, float& s, float other_max, float other_sum) {
    float new_max = fmaxf(m, other_max);
    float a = (m == -INFINITY) ? 0.0f : s * expf(m - new_max);
    float b = (other_max == -INFINITY) ? 0.0f : other_sum * expf(other_max - new_max);
    m = new_max;
    s = a + b;
}

__device__ void warp_reduce_online(float& m, float& s) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        online_merge(m, s, __shfl_xor_sync(FULL_MASK, m, offset), __shfl_xor_sync(FULL_MASK, s, offset));
}

__global__ void softmax_online(const float* x, float* y, int rows, int cols) {
    int warp_id = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * WARPS_PER_BLOCK + warp_id;
    if (row >= rows) return;  // the whole warp leaves together

    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;

    // single pass: running max and rescaled running sum
    float row_max = -INFINITY;
    float row_sum = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        float v = in[c];
        if (v > row_max) {
            row_sum *= expf(row_max - v);
            row_max = v;
        }
        row_sum += expf(v - row_max);
    }
    warp_reduce_online(row_max, row_sum);

    for (int c = lane; c < cols; c += 32) {
        out[c] = expf(in[c] - row_max) / row_sum;
    }
}
