// kltrans: launch softmax_warp_shfl grid=ceil_div(rows, WARPS_PER_BLOCK) block=WARPS_PER_BLOCK*32
// Row softmax, one warp per row: the lanes stride across the row and the maximum and
// the sum are combined with __shfl_xor_sync butterflies, so every lane ends up with
// the row's value and no shared memory or __syncthreads is needed.

#define WARPS_PER_BLOCK 8
#define FULL_MASK 0xffffffffu

__device__ float warp_reduce_max(float val) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        val = fmaxf(val, __shfl_xor_sync(FULL_MASK, val, offset));
    return val;
}

__device__ float warp_reduce_sum(float val) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        val += __shfl_xor_sync(FULL_MASK, val, offset);
    return val;
}

__global__ void softmax_warp_shfl(const float* x, float* y, int rows, int cols) {
    int warp_id = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * WARPS_PER_BLOCK + warp_id;
    if (row >= rows) return;  // the whole warp leaves together

    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;

    float local_max = -INFINITY;
    for (int c = lane; c < cols; c += 32) {
        local_max = fmaxf(local_max, in[c]);
    }
    float row_max = warp_reduce_max(local_max);

    float local_sum = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        local_sum += expf(in[c] - row_max);
    }
    float row_sum = warp_reduce_sum(local_sum);

    for (int c = lane; c < cols; c += 32) {
        out[c] = expf(in[c] - row_max) / row_sum;
    }
}
