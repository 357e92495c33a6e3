// kltrans: launch bias_add_relu_naive grid=ceil_div(rows * cols, 256) block=256
// bias_add_relu naive: y[r, c] = max(x[r, c] + bias[c], 0) on a rows x cols float32
// matrix (row-major). One thread per output element, scalar loads and stores.
extern "C" __global__ void bias_add_relu_naive(const float* x, const float* bias, float* y,
                                               int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int c = i % cols;
        float v = x[i] + bias[c];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
