// softmax_rows.cu - row-wise softmax: one block per row, the row is cached in
// dynamic shared memory so global memory is read once and written once.
#include <cuda_runtime.h>
#include <cfloat>

__device__ __forceinline__ float warp_max(float v)
{
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

// Block-wide all-reduce; `red` is 32 floats of shared scratch. Every thread
// gets the result (each warp reduces the per-warp values itself).
template <bool IS_MAX>
__device__ float block_allreduce(float v, float* red)
{
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    v = IS_MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = (lane < nwarps) ? red[lane] : (IS_MAX ? -FLT_MAX : 0.0f);
    v = IS_MAX ? warp_max(v) : warp_sum(v);
    __syncthreads();   // `red` may be reused right after returning
    return v;
}

__global__ void __launch_bounds__(256, 2)
softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols)
{
    extern __shared__ float smem[];   // `cols` floats: the cached row
    __shared__ float red[32];

    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;

    // pass 1: load the row, track the max
    float m = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = xr[c];
        smem[c] = v;
        m = fmaxf(m, v);
    }
    m = block_allreduce<true>(m, red);

    // pass 2: exponentiate in place, accumulate the sum
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float e = __expf(smem[c] - m);
        smem[c] = e;
        s += e;
    }
    s = block_allreduce<false>(s, red);

    // pass 3: normalise and store
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        yr[c] = smem[c] * inv;
    }
}

void softmax(const float* d_x, float* d_y, int rows, int cols)
{
    const int block = 256;
    const int grid = rows;                    // one block per row
    const size_t smem_bytes = (size_t)cols * sizeof(float);
    softmax_rows<<<grid, block, smem_bytes>>>(d_x, d_y, cols);
}
