// RUN: kltrans opt -p 'dynamic-tiles{counter=tile_counter,shared=sh_tile,cast=int,one=1u}'
// A row-tiled kernel (template TILE) whose counter is a parameter (unsigned int*).
// kltrans: launch row_sums grid=rows block=128
template <int TILE>
__global__ void row_sums_t(const float* m, float* sums, int cols, unsigned int* tile_counter)
{
    __shared__ unsigned int sh_tile;
    __shared__ float part[128];
    if (threadIdx.x == 0) {
        sh_tile = (int)atomicAdd(tile_counter, 1u);
    }
    __syncthreads();
    const int row = sh_tile;
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += m[(size_t)row * cols + c];
    part[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int k = 0; k < 128; ++k) t += part[k];
        sums[row] = t;
    }
}

extern "C" __global__ void row_sums(const float* m, float* sums, int cols, unsigned int* tile_counter)
{
    __shared__ unsigned int sh_tile;
    __shared__ float part[128];
    if (threadIdx.x == 0) {
        sh_tile = (int)atomicAdd(tile_counter, 1u);
    }
    __syncthreads();
    const int row = sh_tile;
    float acc = 0.f;
    int c = threadIdx.x;
    while (c < cols) {
        acc += m[(size_t)row * cols + c];
        c += blockDim.x;
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int k = 0; k < 128; ++k) t += part[k];
        sums[row] = t;
    }
}
