// RUN: kltrans opt -p 'block-reduce-atomic{style=inline,shuffle=down,mask=0xffffffff,lane_form=mod,warp_form=div,braces=false}'
// Counting elements above a threshold, tid spelled threadIdx.x + blockDim.x * blockIdx.x
// and a while loop: an int count is exact in any order, so no reassociation is needed.
// The reduction goes in place with default names and % / / index forms.
// kltrans: launch count_above grid=min(ceil_div(n, 128), 512) block=128
__global__ void count_above(const float* v, float t, int* total, int n) {
  __shared__ int warp_sums[32];
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  int c = 0;
  while (tid < n) {
    c += v[tid] > t;
    tid += blockDim.x * gridDim.x;
  }
  for (int off = 16; off > 0; off >>= 1)
    c += __shfl_down_sync(0xffffffff, c, off);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = c;
  __syncthreads();
  if (warp == 0) {
    int s = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0;
    for (int off = 16; off > 0; off >>= 1)
      s += __shfl_down_sync(0xffffffff, s, off);
    if (lane == 0) atomicAdd(total, s);
  }
}
