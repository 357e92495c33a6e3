// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(in,bins)'
// No aliasing stated pair by pair; the atomics write through bins.
__global__ void hist(const unsigned char* in, unsigned int* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[in[i]], 1u);
}
