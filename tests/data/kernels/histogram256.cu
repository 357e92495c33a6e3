// histogram256.cu - 256-bin byte histogram with per-block privatised bins in
// shared memory; one global atomic per non-empty bin per block.
#include <cuda_runtime.h>
#include <cstdint>

#define NUM_BINS 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

__global__ void __launch_bounds__(256, 2)
histogram256(const uint8_t* __restrict__ data, size_t n, unsigned int* __restrict__ bins)
{
    __shared__ unsigned int local_bins[NUM_BINS];

    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local_bins[b] = 0;
    __syncthreads();

    // Each thread consumes 4 bytes per iteration through a 32-bit load
    // (`data` comes from cudaMalloc, so it is suitably aligned).
    const uint32_t* words = reinterpret_cast<const uint32_t*>(data);
    const size_t n_words = n / 4;
    for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < n_words;
         w += (size_t)gridDim.x * blockDim.x) {
        const uint32_t v = words[w];
        #pragma unroll 4
        for (int k = 0; k < 4; ++k) {
            atomicAdd(&local_bins[(v >> (8 * k)) & 0xFFu], 1u);
        }
    }
    // the n % 4 tail bytes are handled by block 0
    if (blockIdx.x == 0) {
        for (size_t i = n_words * 4 + threadIdx.x; i < n; i += blockDim.x) {
            atomicAdd(&local_bins[data[i]], 1u);
        }
    }
    __syncthreads();

    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        const unsigned int c = local_bins[b];
        if (c) atomicAdd(&bins[b], c);
    }
}

void histogram(const uint8_t* d_data, size_t n, unsigned int* d_bins, cudaStream_t stream)
{
    cudaMemsetAsync(d_bins, 0, NUM_BINS * sizeof(unsigned int), stream);
    const int block = 256;
    int grid = (int)CEIL_DIV(n / 4, (size_t)block);
    if (grid < 1) grid = 1;
    if (grid > 1024) grid = 1024;
    histogram256<<<grid, block, 0, stream>>>(d_data, n, d_bins);
}
