// RUN: kltrans opt -p 'reduce-after-load'
// GATE: corpus/reduce-sum
// The CUDA samples' spelling of the first add during load: shared memory through an
// accessor struct, the pair folded in a local with a guarded +=, the grid written
// ceil_div(n, 2*256). One element per thread again; the local stays.
template <class T>
struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int __smem[];
    return reinterpret_cast<T *>(__smem);
  }
};

// kltrans: launch reduce_sum grid=ceil_div(n, 2*256) block=256 smem=256*4
extern "C" __global__ void reduce_sum(const float *g_idata, float *g_odata, int n) {
  float *sdata = SharedMemory<float>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

  float mySum = (i < n) ? g_idata[i] : 0;

  if (i + blockDim.x < n)
    mySum += g_idata[i + blockDim.x];

  sdata[tid] = mySum;
  __syncthreads();

  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) atomicAdd(g_odata, sdata[0]);
}
