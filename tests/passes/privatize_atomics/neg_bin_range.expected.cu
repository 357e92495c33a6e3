// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: bin-range: is not provably in [0, 64)
// 64 bins but a byte-sized index: values 64..255 would write past the private bins.
#define NUM_BINS 64
// kltrans: launch small_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void small_hist(const unsigned char* data, unsigned int* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[data[i]], 1u);
}
