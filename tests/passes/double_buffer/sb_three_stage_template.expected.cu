// RUN: kltrans opt -p 'single-buffer'
// GATE: corpus/sgemm
// A hand-written three-stage pipeline (loader `fetch`, stage parameter `buf`, K stepped by
// the template tile width): the loads go back to the top of the loop behind two barriers.
// kltrans: launch sgemm_pipe3 grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)

template <int BK>
__device__ __forceinline__ void pipe3_body(int M, int N, int K, float alpha, const float* A,
                                           const float* B, float beta, float* C)
{
    __shared__ float As[BK][BK];
    __shared__ float Bs[BK][BK];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int gr = blockIdx.y * BK + ty, gc = blockIdx.x * BK + tx;
    float acc = 0.0f;
    for (int k = 0; k < K; k += BK) {
        As[ty][tx] = (gr < M && k + tx < K) ? A[gr * K + k + tx] : 0.0f;
        Bs[ty][tx] = (k + ty < K && gc < N) ? B[(k + ty) * N + gc] : 0.0f;
        __syncthreads();
        for (int j = 0; j < BK; ++j)
            acc += As[ty][j] * Bs[j][tx];
        __syncthreads();
    }
    if (gr < M && gc < N)
        C[gr * N + gc] = alpha * acc + beta * C[gr * N + gc];
}

extern "C" __global__ void sgemm_pipe3(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    pipe3_body<16>(M, N, K, alpha, A, B, beta, C);
}
