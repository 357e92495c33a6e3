// RUN: kltrans opt -p 'reduce-after-load{local=inline}'
// CHECK-SKIP: local-dead: after the store
// The tree keeps the thread's running sum in mySum (sdata[tid] = mySum = mySum + ...):
// the local cannot be folded back into the store.
// kltrans: launch reduce_sum grid=ceil_div(n, 2 * 256) block=256
extern "C" __global__ void reduce_sum(const float *g_idata, float *g_odata, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  float mySum = (i < n) ? g_idata[i] : 0;
  if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
  sdata[tid] = mySum;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(g_odata, mySum);
}
