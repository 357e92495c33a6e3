// block_reduce.cu - templated block-wide sum reduction with warp shuffles.
#include <cuda_runtime.h>

template <typename T>
__device__ __forceinline__ T warp_reduce_sum(T v)
{
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;  // valid in lane 0 only
}

// Each block reduces BLOCK * ITEMS contiguous elements into one partial sum.
template <typename T, int BLOCK = 256, int ITEMS = 4>
__global__ void __launch_bounds__(BLOCK)
block_reduce_sum(const T* __restrict__ in, T* __restrict__ partial, int n)
{
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be whole warps");
    __shared__ T warp_sums[BLOCK / 32];

    const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
    T acc = T(0);
    #pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = base + k * BLOCK;   // coalesced: stride BLOCK between items
        if (i < n) acc += in[i];
    }

    acc = warp_reduce_sum(acc);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();

    if (warp == 0) {
        acc = (lane < BLOCK / 32) ? warp_sums[lane] : T(0);
        acc = warp_reduce_sum(acc);
        if (lane == 0) partial[blockIdx.x] = acc;
    }
}

// Explicit instantiation for the double path used by the test harness.
template __global__ void block_reduce_sum<double, 256, 4>(const double*, double*, int);

// Host: two-pass reduction. The second pass is one block over the partials.
template <typename T>
void reduce_sum(const T* d_in, T* d_partial, T* d_out, int n)
{
    constexpr int kItems = 4;
    const int grid = (n + 256 * kItems - 1) / (256 * kItems);
    block_reduce_sum<T, 256, kItems><<<grid, 256>>>(d_in, d_partial, n);
    block_reduce_sum<T, 128, 8><<<1, 128>>>(d_partial, d_out, grid);  // grid <= 1024
}

template void reduce_sum<float>(const float*, float*, float*, int);

void reduce_sum_small(const float* d_in, float* d_out, int n)
{
    // n <= 128 * 4: a single block with the default ITEMS is enough
    block_reduce_sum<float, 128><<<1, 128>>>(d_in, d_out, n);
}
