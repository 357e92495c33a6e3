// RUN: kltrans opt -p 'vector-c-update{guard=VEC,val=c}'
// GATE: corpus/sgemm
// The shape of corpus/sgemm/expert.cu: a body template on `bool VEC` whose `true`
// instantiation runs only when N % 4 == 0 and B/C are 16-byte aligned; each thread
// owns a 1x4 strip of C (col a multiple of 4 as written).
#define BN 64
template <bool VEC>
__device__ __forceinline__ void gemm_body(int M, int N, int K, float alpha, const float* A,
                                          const float* B, float beta, float* C)
{
    const int row = blockIdx.y * 16 + threadIdx.y;
    const int col = blockIdx.x * BN + threadIdx.x * 4;
    if (row >= M) return;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = 0; k < K; ++k) {
        const float a = A[(size_t)row * K + k];
        for (int j = 0; j < 4; ++j)
            if (col + j < N) acc[j] += a * B[(size_t)k * N + col + j];
    }
    float* c_row = C + (size_t)row * (size_t)N;
    if (VEC) {
        if (col < N) {
            float4* p = reinterpret_cast<float4*>(c_row + col);
            float4 c = *p;
            c.x = alpha * acc[0] + beta * c.x;
            c.y = alpha * acc[1] + beta * c.y;
            c.z = alpha * acc[2] + beta * c.z;
            c.w = alpha * acc[3] + beta * c.w;
            *p = c;
        }
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (col + j < N) {
                float* p = c_row + col + j;
                *p = alpha * acc[j] + beta * *p;
            }
        }
    }
}
// kltrans: launch gemm grid=(ceil_div(N, 64), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void gemm(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C)
{
    const unsigned long long addr_bits = reinterpret_cast<unsigned long long>(B) |
                                         reinterpret_cast<unsigned long long>(C);
    const bool vec = ((N & 3) == 0) && ((addr_bits & 15ull) == 0);
    if (vec)
        gemm_body<true>(M, N, K, alpha, A, B, beta, C);
    else
        gemm_body<false>(M, N, K, alpha, A, B, beta, C);
}
