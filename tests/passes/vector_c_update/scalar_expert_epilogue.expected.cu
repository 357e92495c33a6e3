// RUN: kltrans opt -p scalar-c-update
// GATE: corpus/sgemm
// The epilogue of corpus/sgemm/expert.cu: two float4 strips 32 columns apart per row,
// the flag a template parameter, comments inside the vector branch.
template <bool VEC>
__device__ __forceinline__ void body(int M, int N, int K, float alpha, const float* A,
                                     const float* B, float beta, float* C)
{
    const int bm = blockIdx.y * 16, bn = blockIdx.x * 64;
    const int n_off = threadIdx.x * 4;
    const int row = bm + threadIdx.y;
    if (row >= M) return;
    float acc[8];
    for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 4; ++j) {
            const int cc = bn + n_off + h * 32 + j;
            float s = 0.0f;
            for (int k = 0; k < K; ++k)
                if (cc < N) s += A[(size_t)row * K + k] * B[(size_t)k * N + cc];
            acc[h * 4 + j] = s;
        }
    float* c_row = C + (size_t)row * (size_t)N;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int col = bn + n_off + h * 32;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (col + j < N) {
                float* p = c_row + col + j;
                *p = alpha * acc[h * 4 + j] + beta * *p;
            }
        }
    }
}
// kltrans: launch gemm grid=(ceil_div(N, 64), ceil_div(M, 16)) block=(8, 16)
extern "C" __global__ void gemm(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C)
{
    const unsigned long long addr_bits = reinterpret_cast<unsigned long long>(B) |
                                         reinterpret_cast<unsigned long long>(C);
    const bool vec = ((N & 3) == 0) && ((addr_bits & 15ull) == 0);
    if (vec)
        body<true>(M, N, K, alpha, A, B, beta, C);
    else
        body<false>(M, N, K, alpha, A, B, beta, C);
}
