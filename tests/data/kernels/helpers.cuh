// helpers.cuh - small device utilities and a generic row-sum kernel shared
// across translation units.
#pragma once

#include <cuda_runtime.h>
#include <cstddef>

#ifndef KL_WARP_SIZE
#define KL_WARP_SIZE 32
#endif

namespace kl {

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = KL_WARP_SIZE / 2; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;  // lane 0 holds the total
}

__host__ __device__ inline int round_up(int x, int m) { return ((x + m - 1) / m) * m; }

// Load with a fallback value for out-of-range indices.
template <typename T>
__device__ __forceinline__ T load_or(const T* p, int i, int n, T fallback)
{
    return i < n ? p[i] : fallback;
}

/* Row-wise sum: one warp per row, ROWS_PER_BLOCK warps per block.
   Accumulates in fp32 whatever T is. */
template <typename T, int ROWS_PER_BLOCK = 4>
__global__ void row_sum(const T* __restrict__ x, float* __restrict__ out, int rows, int cols)
{
    const int warp = threadIdx.x / KL_WARP_SIZE;
    const int lane = threadIdx.x % KL_WARP_SIZE;
    const int row = blockIdx.x * ROWS_PER_BLOCK + warp;
    if (row >= rows) return;

    const T* xr = x + (size_t)row * cols;
    float acc = 0.0f;
    for (int c = lane; c < cols; c += KL_WARP_SIZE) {
        acc += static_cast<float>(load_or(xr, c, cols, T(0)));
    }
    acc = warp_sum(acc);
    if (lane == 0) out[row] = acc;
}

template <typename T>
inline void launch_row_sum(const T* x, float* out, int rows, int cols,
                           cudaStream_t stream = 0)
{
    constexpr int kRows = 4;
    dim3 block(kRows * KL_WARP_SIZE);
    dim3 grid((rows + kRows - 1) / kRows);
    row_sum<T, kRows><<<grid, block, 0, stream>>>(x, out, rows, cols);
}

}  // namespace kl
