// kltrans: launch softmax_block_smem grid=rows block=BLOCK_SIZE
// Row softmax, one block per row: the block's threads stride across the row, and the
// per-thread maxima and partial sums are combined by a shared-memory tree reduction
// (halving the active threads each step, __syncthreads between steps).

#define BLOCK_SIZE 256

__global__ void softmax_block_smem(const float* x, float* y, int rows, int cols) {
    __shared__ float red[BLOCK_SIZE];

    int row = blockIdx.x;
    int tid = threadIdx.x;
    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;

    // pass 1: row maximum
    float local_max = -INFINITY;
    for (int c = tid; c < cols; c += blockDim.x) {
        local_max = fmaxf(local_max, in[c]);
    }
    red[tid] = local_max;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            red[tid] = fmaxf(red[tid], red[tid + stride]);
        }
        __syncthreads();
    }
    float row_max = red[0];
    __syncthreads();  // everyone has read red[0] before it is overwritten

    // pass 2: sum of exp(x - max)
    float local_sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) {
        local_sum += expf(in[c] - row_max);
    }
    red[tid] = local_sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            red[tid] += red[tid + stride];
        }
        __syncthreads();
    }
    float row_sum = red[0];

    // pass 3: normalize
    for (int c = tid; c < cols; c += blockDim.x) {
        out[c] = expf(in[c] - row_max) / row_sum;
    }
}
