// RUN: kltrans opt -p 'cp-async' --arch 'sm_80'
// CHECK-SKIP: shared-from-global: the function writes data
// An in-place pairwise smoothing: the tile is read from data, which the kernel then writes;
// an asynchronous copy could observe either value.
// kltrans: launch smooth_pairs grid=ceil_div(n, 256) block=256
extern "C" __global__ void smooth_pairs(float* data, int n)
{
    __shared__ float tile[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = (i < n) ? data[i] : 0.0f;
    __syncthreads();
    if (i < n) data[i] = 0.5f * (tile[threadIdx.x] + tile[threadIdx.x ^ 1]);
}
