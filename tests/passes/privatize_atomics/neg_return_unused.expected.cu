// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: return-unused: the old count returned by atomicAdd is used
// The first element of each bin is recorded: it needs the global count before the update.
// kltrans: launch first_of_bin grid=ceil_div(n, 256) block=256
extern "C" __global__ void first_of_bin(const unsigned char* data, unsigned int* hist, int* first, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int old = atomicAdd(&hist[data[i]], 1u);
        if (old == 0u) first[data[i]] = i;
    }
}
