// RUN: kltrans opt -p 'global-atomics'
// CHECK-SKIP: privatized-shape: the merge loop does not add
// Signed counts merged only when above zero: a bin that went negative (increments of -1)
// is left out of the global bins, so the merge is not "add every bin" and stays.
// kltrans: launch signed_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void signed_hist(const unsigned char* data, const int* w, int* hist, int n)
{
    __shared__ int local_hist[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local_hist[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&local_hist[data[i]], w[i]);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        int c = local_hist[b];
        if (c > 0)
            atomicAdd(&hist[b], c);
    }
}
