// kltrans: launch histo256 grid=ceil_div(n, THREADS) block=THREADS
// 256-bin byte histogram, first attempt: each thread reads one byte and bumps that
// bin in global memory with atomicAdd. histo must be zero on entry.

typedef unsigned char uchar;
typedef unsigned int uint;

#define THREADS 256

__global__ void histo256(const uchar *buffer, uint *histo, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) {
    atomicAdd(&histo[buffer[i]], 1u);
  }
}
