__global__ void stage(const float* in, float* out) {
    __shared__ float tile[256];
    tile[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    out[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x];
}
