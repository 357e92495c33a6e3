// gather_scatter.cu - row gather / scatter-add driven by an index array, with the
// problem shape passed to the kernels as a struct by value.
#include <cuda_runtime.h>

struct GatherParams {
    int rows;        // number of rows to gather
    int cols;        // row width in floats
    float scale;     // applied to every gathered value
    int src_stride;  // leading dimension of the source matrix
};

// Clamp an index in place; returns true when it had to be clamped.
__device__ bool clamp_index(int& i, int limit)
{
    if (i < 0) { i = 0; return true; }
    if (i >= limit) { i = limit - 1; return true; }
    return false;
}

__device__ __forceinline__ void accumulate(float& dst, float v, float scale)
{
    dst = fmaf(v, scale, dst);
}

__global__ void gather_rows(GatherParams p, const int* idx, const float* __restrict__ src,
                            float* __restrict__ dst, int src_rows, int* n_clamped)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y;
    if (row >= p.rows || col >= p.cols) return;

    int r = idx[row];
    if (clamp_index(r, src_rows) && col == 0) atomicAdd(n_clamped, 1);
    dst[(size_t)row * p.cols + col] = src[(size_t)r * p.src_stride + col] * p.scale;
}

/* dst[idx[row], :] += scale * src[row, :]; duplicate indices are handled by
   the atomics. */
__global__ void scatter_add_rows(const GatherParams p, const int* __restrict__ idx,
                                 const float* __restrict__ src, float* dst)
{
    const int col = threadIdx.x + blockDim.x * blockIdx.x;
    const int row = blockIdx.y;
    if (row < p.rows && col < p.cols) {
        float acc = 0.0f;
        accumulate(acc, src[(size_t)row * p.cols + col], p.scale);
        atomicAdd(&dst[(size_t)idx[row] * p.src_stride + col], acc);
    }
}

void gather(const GatherParams& p, const int* d_idx, const float* d_src, float* d_dst,
            int src_rows, int* d_clamped, cudaStream_t stream)
{
    dim3 block(128);
    dim3 grid((p.cols + 127) / 128, p.rows);
    gather_rows<<<grid, block, 0, stream>>>(p, d_idx, d_src, d_dst, src_rows, d_clamped);
}

void scatter_add(const GatherParams& p, const int* d_idx, const float* d_src, float* d_dst)
{
    dim3 block(128);
    dim3 grid((p.cols + 127) / 128, p.rows);
    scatter_add_rows<<<grid, block>>>(p, d_idx, d_src, d_dst);
}
