// RUN: kltrans opt -p unshare-row --assume reassoc
// CHECK-SKIP: rows-launched: is known to hold
// A block per row launched over `nrows` blocks, but no kernel parameter is named nrows
// and no binds(...) fact says which one holds it: the guard cannot be written.
// kltrans: launch sums grid=nrows block=128
__global__ void sums(const float* src, float* dst, int height, int cols)
{
    __shared__ float part[128];
    float t = 0.0f;
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        t += src[(size_t)blockIdx.x * cols + k];
    part[threadIdx.x] = t;
    __syncthreads();
    for (int h = 64; h > 0; h >>= 1) {
        if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) dst[blockIdx.x] = part[0];
}
