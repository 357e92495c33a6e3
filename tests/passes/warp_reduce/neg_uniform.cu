// RUN: kltrans opt -p 'warp-reduce'
// CHECK-SKIP: uniform: is inside the loop
// A persistent block reduces chunk after chunk: the next chunk's stores would race with
// warp 0 still reading the array, which the tree's last __syncthreads() prevented.
// kltrans: launch chunk_sums grid=64 block=256
extern "C" __global__ void chunk_sums(const float* x, float* out, int chunks) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  for (int c = blockIdx.x; c < chunks; c += gridDim.x) {
    sdata[tid] = x[c * 256 + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] += sdata[tid + s];
      __syncthreads();
    }
    if (tid == 0) out[c] = sdata[0];
  }
}
