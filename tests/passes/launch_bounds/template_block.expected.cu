// RUN: kltrans opt -p 'add-launch-bounds{place=before-type}'
// The block size is the template parameter BLOCK (instantiated with 128 and 256): the
// bound is written as BLOCK, so each instantiation gets its own.
// kltrans: launch block_sum grid=ceil_div(n, BLOCK) block=BLOCK
template <int BLOCK>
__global__ __launch_bounds__(BLOCK) void block_sum(const float* in, float* partial, int n) {
  __shared__ float buf[BLOCK];
  int tid = threadIdx.x;
  int gid = blockIdx.x * BLOCK + tid;
  buf[tid] = gid < n ? in[gid] : 0.0f;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = buf[0];
}
template __global__ void block_sum<128>(const float*, float*, int);
template __global__ void block_sum<256>(const float*, float*, int);
