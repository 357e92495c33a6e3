__global__ void fill(float* x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}

__global__ void zero(float* x, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = 0.0f;
}
