// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: bin-count: cannot tell the number of bins
// The bin comes from a float and nothing in the kernel names the number of bins.
// kltrans: launch quantize_count grid=ceil_div(n, 256) block=256
extern "C" __global__ void quantize_count(const float* x, unsigned int* counts, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = (int)(x[i] * 10.0f);
        atomicAdd(&counts[b], 1u);
    }
}
