// Naive kernels: a thread per output with its own loops, per-element atomics to one
// accumulator, a histogram. The model finds only threads' own folds here
// ("coll: thread ..."), and the naive check finds no mechanism at all.

__global__ void row_sum(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.f;
    for (int c = 0; c < cols; ++c)  // coll: thread reduce sum loop
        s += x[r * cols + c];
    y[r] = s;
}

__global__ void row_max(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float m = x[r * cols];
        for (int c = 1; c < cols; c++) {  // coll: thread reduce max loop
            m = fmaxf(m, x[r * cols + c]);
        }
        y[r] = m;
    }
}

__global__ void total(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(out, x[i]);  // coll: none: every thread adds its own element: not a cross-block step
}

__global__ void histogram(const unsigned char* data, unsigned* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);  // coll: none: a per-thread address: a histogram
}
