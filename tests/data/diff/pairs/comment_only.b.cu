/* Rectified linear unit, in place: negative values become zero. */
__global__ void relu(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // one element per thread
    if (i < n) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
