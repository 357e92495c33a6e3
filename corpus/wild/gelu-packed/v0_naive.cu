// kltrans: launch gelu_fwd grid=ceil_div(n, BLOCK_SIZE) block=BLOCK_SIZE
// GELU, tanh approximation: y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Naive version: one thread per element, one scalar load and one scalar store.

#define BLOCK_SIZE 256
#define GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_CUBIC 0.044715f

__device__ float gelu_tanh(float x) {
    float inner = GELU_SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

__global__ void gelu_fwd(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = gelu_tanh(x[i]);
    }
}
