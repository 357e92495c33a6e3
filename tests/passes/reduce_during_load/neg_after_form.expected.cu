// RUN: kltrans opt -p 'reduce-after-load'
// CHECK-SKIP: staged-load: not the 2 loads
// The second element is read 256 further while the index steps by blockDim.x * 2: not
// the loads reduce-during-load writes, so it is not undone.
// kltrans: launch reduce_pairs grid=ceil_div(n, 2 * 256) block=256
extern "C" __global__ void reduce_pairs(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  sdata[tid] = ((i < n) ? x[i] : 0.0f) + (i + 256 < n ? x[i + 256] : 0.0f);
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, sdata[0]);
}
