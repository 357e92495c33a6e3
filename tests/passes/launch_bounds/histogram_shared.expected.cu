// RUN: kltrans opt -p 'add-launch-bounds{min_blocks=4}'
// GATE: corpus/histogram
// Privatised shared-memory histogram, 256 threads per block (the launch header): four
// resident blocks of 256 threads fit every SM from sm_70 to sm_90.
// kltrans: launch histogram grid=ceil_div(n, 4096) block=256
#include <stdint.h>

#define NUM_BINS 256
#define BLOCK_THREADS 256
#define ITEMS_PER_THREAD 16

extern "C" __global__ void __launch_bounds__(256, 4) histogram(const uint8_t* data, unsigned int* bins, int n) {
  __shared__ unsigned int local[NUM_BINS];
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local[b] = 0u;
  __syncthreads();
  const int start = blockIdx.x * BLOCK_THREADS * ITEMS_PER_THREAD + threadIdx.x;
  for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
    const int i = start + k * BLOCK_THREADS;
    if (i < n) atomicAdd(&local[data[i]], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
    if (local[b]) atomicAdd(&bins[b], local[b]);
  }
}
