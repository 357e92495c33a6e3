// RUN: kltrans opt -p 'privatize-columns' --assume 'NUM_BINS==64'
// Bucket counts over a while loop with a named gid, the bucket the top six bits of a
// 32-bit key (`>> 26` keeps it below 64); the number of bins is a template parameter.
// kltrans: launch bucket_count grid=min(ceil_div(n, 1024), 1024) block=128
template <int NUM_BINS>
__global__ void bucket_count(const unsigned int* keys, unsigned int* hist, int n)
{
    __shared__ unsigned int counts[NUM_BINS * 32];

    for (int k = threadIdx.x; k < NUM_BINS * 32; k += blockDim.x) {
        counts[k] = 0u;
    }
    __syncthreads();

    const int lane = threadIdx.x & 31;
    unsigned int* col = counts + lane;

    int gid = threadIdx.x + blockDim.x * blockIdx.x;
    while (gid < n) {
        unsigned int key = keys[gid];
        atomicAdd(col + ((key >> 26) << 5), 1u);
        gid += blockDim.x * gridDim.x;
    }
    __syncthreads();

    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        const unsigned int* row = counts + b * 32;
        unsigned int total = 0u;
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            total += row[(l + b) & 31];
        }
        if (total != 0u) {
            atomicAdd(hist + b, total);
        }
    }
}

template __global__ void bucket_count<64>(const unsigned int*, unsigned int*, int);
