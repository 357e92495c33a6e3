// kltrans: launch gelu_fwd grid=min(ceil_div(n, BLOCK_SIZE), MAX_BLOCKS) block=BLOCK_SIZE
// GELU, tanh approximation: y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Grid-stride loop: the grid stops growing at MAX_BLOCKS (roughly one resident wave on
// an H200, 132 SMs x 8 blocks of 256 threads) and every thread steps through the array
// by the size of the whole grid.

#define BLOCK_SIZE 256
#define MAX_BLOCKS 1024
#define GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_CUBIC 0.044715f

__device__ float gelu_tanh(float x) {
    float inner = GELU_SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

__global__ void gelu_fwd(const float *x, float *y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = gelu_tanh(x[i]);
    }
}
