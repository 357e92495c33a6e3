// pragma_unbraced_for.cu - `#pragma unroll` placed between an unbraced loop or
// `if` header and the loop it applies to. Valid CUDA, awkward for parsers,
// because the pragma line sits where a statement body is expected.
#include <cuda_runtime.h>

// Sums groups of 4 consecutive values; each thread owns n / blockDim.x groups.
__global__ void group_sum4(const float* __restrict__ a, float* __restrict__ out, int n)
{
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
    #pragma unroll
        for (int j = 0; j < 4; ++j) acc += a[i * 4 + j];
    atomicAdd(out, acc);
}

// y[r] = dot(w[r, 0:8], x) for rows whose mask is set; masked-off rows get a
// cheap two-term estimate instead.
__global__ void masked_row_dot8(const float* __restrict__ w, const float* __restrict__ x,
                                const int* __restrict__ mask, float* __restrict__ y, int rows)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    if (mask[r])
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            acc += w[r * 8 + k] * x[k];
        }
    else
        #pragma unroll 2
        for (int k = 0; k < 2; ++k) acc += w[r * 8 + k] * x[k];  /* two-term estimate */
    y[r] = acc;
}

// Triple nest with a pragma in front of each unbraced inner loop.
__global__ void box_sum_4x2(const float* __restrict__ in, float* __restrict__ out,
                            int n_boxes)
{
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= n_boxes) return;
    float acc = 0.0f;
    for (int rep = 0; rep < 2; ++rep)
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll 2
            for (int j = 0; j < 2; ++j)
                acc += in[(size_t)b * 16 + rep * 8 + i * 2 + j];
    out[b] = acc;
}

void launch_group_sum4(const float* a, float* out, int n_groups)
{
    group_sum4<<<1, 256>>>(a, out, n_groups);
}
