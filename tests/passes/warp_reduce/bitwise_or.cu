// RUN: kltrans opt -p 'warp-reduce'
// A bitwise-or flag reduction on unsigned ints (`|=`), block size from the header.
// kltrans: launch any_flags grid=ceil_div(n, 256) block=256
extern "C" __global__ void any_flags(const unsigned int* flags, unsigned int* out, int n) {
  __shared__ unsigned int bits[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + tid;
  bits[tid] = (i < n) ? flags[i] : 0u;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) bits[tid] |= bits[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicOr(out, bits[0]);
}
