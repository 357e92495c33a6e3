// Without cooperative groups a bare name is the user's own (see spellings.cu).
__device__ float reduce(float a, float b, float c) { return a + b + c; }
__device__ void sync(int) {}

__global__ void k(const float* x, float* y) {
    float v = reduce(x[0], x[1], x[2]);  // op: none: the user's function, no using-directive
    sync(0);  // op: none: the user's function
    y[threadIdx.x] = v;
}
