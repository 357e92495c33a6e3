// trouble_all.cu - every grammar trouble case in one translation unit:
// __align__ structs, three-argument __launch_bounds__, extended device lambdas
// and `#pragma unroll` between an unbraced loop/if header and its body.
// Build with: nvcc -arch=sm_90 --extended-lambda
#include <cuda_runtime.h>

struct __align__(16) Pair {
    float a, b, c, d;
};

__device__ __forceinline__ float pair_sum(const Pair& p) { return (p.a + p.b) + (p.c + p.d); }

// Sum of each Pair's components, 4 Pairs per thread; pragma between the
// unbraced outer for and the inner for.
__global__ void __launch_bounds__(128, 4, 1)
pair_group_sum(const Pair* __restrict__ in, float* __restrict__ out, int n_groups)
{
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_groups; i += blockDim.x * gridDim.x)
    #pragma unroll
        for (int j = 0; j < 4; ++j) acc += pair_sum(in[i * 4 + j]);
    atomicAdd(out, acc);
}

// Pair scaled by a per-component factor, only where `flag` is set.
__global__ void __launch_bounds__(256, 2, 1)
pair_scale_masked(Pair scale, Pair* __restrict__ data, const int* flag, int n)
{
    __shared__ Pair s_scale;
    if (threadIdx.x == 0) s_scale = scale;
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float* comp = reinterpret_cast<float*>(&data[i < n ? i : 0]);
    const float* f = reinterpret_cast<const float*>(&s_scale);
    if (i < n && flag[i])
#pragma unroll 4
        for (int k = 0; k < 4; ++k) comp[k] *= f[k];
}

template <typename F>
__global__ void apply_pairs(Pair* data, int n, F f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = f(data[i]);
}

void run_all(Pair* d_pairs, float* d_out, const int* d_flag, int n)
{
    const int block = 128;
    const int grid = (n + block - 1) / block;
    const float bias = 0.25f;

    auto add_bias = [=] __device__ (Pair p) {
        p.a += bias; p.b += bias; p.c += bias; p.d += bias;
        return p;
    };
    apply_pairs<<<grid, block>>>(d_pairs, n, add_bias);

    auto halve = [=] __host__ __device__ (Pair p) -> Pair {
        return Pair{0.5f * p.a, 0.5f * p.b, 0.5f * p.c, 0.5f * p.d};
    };
    apply_pairs<<<grid, block>>>(d_pairs, n, halve);

    Pair scale = {1.0f, 2.0f, 3.0f, 4.0f};
    pair_scale_masked<<<(n + 255) / 256, 256>>>(scale, d_pairs, d_flag, n);
    pair_group_sum<<<(n / 4 + block - 1) / block, block>>>(d_pairs, d_out, n / 4);
}
