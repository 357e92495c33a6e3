// device_lambda.cu - extended lambdas (`__device__` and `__host__ __device__`)
// passed to generic kernels. Build with: nvcc --extended-lambda
#include <cuda_runtime.h>

__device__ __forceinline__ float square(float v) { return v * v; }

template <typename F>
__global__ void for_each_index(int n, F f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) f(i);
}

template <typename F>
__global__ void transform_kernel(const float* __restrict__ in, float* __restrict__ out,
                                 int n, F f)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = f(in[i]);
    }
}

void run(float* d_x, float* d_y, int n, float alpha, cudaStream_t stream)
{
    const int block = 256;
    const int grid = (n + block - 1) / block;

    auto init = [=] __device__ (int i) {
        d_x[i] = alpha * static_cast<float>(i);
    };
    for_each_index<<<grid, block, 0, stream>>>(n, init);

    // also callable on the host, e.g. for a CPU reference check
    auto gelu_tanh = [=] __host__ __device__ (float x) -> float {
        const float k0 = 0.7978845608f, k1 = 0.044715f;
        return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
    };
    transform_kernel<<<grid, block, 0, stream>>>(d_x, d_y, n, gelu_tanh);

    // lambda written inline in the launch argument list
    for_each_index<<<grid, block, 0, stream>>>(n, [=] __device__ (int i) {
        d_y[i] += square(d_x[i]);
    });
}
