// RUN: kltrans opt -p 'warp-reduce'
// A templated block maximum (typename T, int BLOCK; `BLOCK >> 1`, `s = s >> 1`,
// `max(a, b)`): the element type and block size come from the explicit instantiation.
// kltrans: launch block_max grid=ceil_div(n, BLOCK) block=BLOCK
template <typename T, int BLOCK>
__global__ void block_max(const T* in, T* out, int n) {
  __shared__ T smem[BLOCK];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * BLOCK + tid;
  smem[tid] = i < n ? in[i] : in[0];
  __syncthreads();
  for (int s = BLOCK >> 1; s >= 1; s = s >> 1) {
    if (tid < s)
      smem[tid] = max(smem[tid], smem[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = smem[0];
}
template __global__ void block_max<int, 512>(const int*, int*, int);
