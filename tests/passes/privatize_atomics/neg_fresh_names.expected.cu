// RUN: kltrans opt -p 'privatize-atomics{array=i}'
// CHECK-SKIP: fresh-names: the name i is already used
// The requested name of the shared bins is the kernel's index variable.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void histogram_naive(const unsigned char* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i]], 1u);
}
