// RUN: kltrans opt -p 'privatize-columns' --assume 'NUM_BINS==64'
// Bucket counts over a while loop with a named gid, the bucket the top six bits of a
// 32-bit key (`>> 26` keeps it below 64); the number of bins is a template parameter.
// kltrans: launch bucket_count grid=min(ceil_div(n, 1024), 1024) block=128
template <int NUM_BINS>
__global__ void bucket_count(const unsigned int* keys, unsigned int* hist, int n)
{
    int gid = threadIdx.x + blockDim.x * blockIdx.x;
    while (gid < n) {
        unsigned int key = keys[gid];
        atomicAdd(hist + (key >> 26), 1u);
        gid += blockDim.x * gridDim.x;
    }
}

template __global__ void bucket_count<64>(const unsigned int*, unsigned int*, int);
