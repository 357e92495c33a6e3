// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: bins-private: hist is also used
// A capped histogram reads the global count before adding: private counts would not see it.
// kltrans: launch capped_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void capped_hist(const unsigned char* data, unsigned int* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && hist[data[i]] < 1000u) atomicAdd(&hist[data[i]], 1u);
}
