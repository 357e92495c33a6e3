// RUN: kltrans opt -p 'cp-async{form=switch,macro=TS,commit=cp_commit,wait-all=cp_wait}'
// CHECK-SKIP: fresh-macro: TS is already used
// The macro name TS is already the tile template parameter.
// kltrans: launch sgemm_helpers grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)

__device__ __forceinline__ void load_elem(float* dst, const float* src, bool pred)
{
    *dst = pred ? *src : 0.0f;
}

__device__ __forceinline__ void cp_commit()
{
}

__device__ __forceinline__ void cp_wait()
{
}

template <int TS>
__device__ void sgemm_tile_body(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C)
{
    __shared__ float sA[TS][TS];
    __shared__ float sB[TS][TS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TS + ty;
    const int col = blockIdx.x * TS + tx;
    float sum = 0.0f;
    int k0 = 0;
    while (k0 < K) {
        const int ka = k0 + tx, kb = k0 + ty;
        load_elem(&sA[ty][tx], A + (size_t)(row < M ? row : 0) * K + (ka < K ? ka : 0),
                  row < M && ka < K);
        load_elem(&sB[ty][tx], B + (size_t)(kb < K ? kb : 0) * N + (col < N ? col : 0),
                  kb < K && col < N);
        cp_commit();
        cp_wait();
        __syncthreads();
        for (int k = 0; k < TS; ++k)
            sum += sA[ty][k] * sB[k][tx];
        __syncthreads();
        k0 += TS;
    }
    if (row < M && col < N)
        C[(size_t)row * N + col] = alpha * sum + beta * C[(size_t)row * N + col];
}

extern "C" __global__ void sgemm_helpers(int M, int N, int K, float alpha, const float* A,
                                         const float* B, float beta, float* C)
{
    sgemm_tile_body<16>(M, N, K, alpha, A, B, beta, C);
}
