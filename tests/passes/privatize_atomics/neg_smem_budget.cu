// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: smem-budget: exceed the 48 KiB of static shared memory
// 16384 bins of 4 bytes: 64 KiB, more than the static shared memory of a block.
#define NUM_BINS 16384
// kltrans: launch wide_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void wide_hist(const unsigned short* data, unsigned int* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int b = data[i];
        if (b < NUM_BINS) atomicAdd(&hist[b], 1u);
    }
}
