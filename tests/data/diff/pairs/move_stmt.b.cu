__global__ void two_outputs(const float* x, float* y, float* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    z[i] = v + 1.0f;
    y[i] = v * 2.0f;
}
