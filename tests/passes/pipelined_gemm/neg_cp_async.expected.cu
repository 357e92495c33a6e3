// RUN: kltrans opt -p 'direct-gemm' --assume 'no_alias(*)'
// CHECK-SKIP: plain-copies: is not a plain copy
// The pipeline hooks issue cp.async: sync-copy has to run first.
// kltrans: launch gemm grid=(ceil_div(N, 128), ceil_div(M, 128)) block=256
#define GEMM_BM 128
#define GEMM_BN 128
#define GEMM_BK 16
#define GEMM_STAGES 2

// 4-byte global -> shared copy, zero fill when !ok (src is then not read)
__device__ __forceinline__ void gemm_copy4(float* dst, const float* src, bool ok)
{
    *dst = ok ? *src : 0.0f;
}

// 16-byte global -> shared copy (both 16-byte aligned), zero fill when !ok
__device__ __forceinline__ void gemm_copy16(float* dst, const float* src, bool ok)
{
    *reinterpret_cast<float4*>(dst) =
        ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// pipeline hooks of the copies (empty: plain loads and stores; cp-async fills them)
__device__ __forceinline__ void gemm_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void gemm_commit_unused()
{
}

__device__ __forceinline__ void gemm_wait_stage()
{
}

__device__ __forceinline__ void gemm_wait_all()
{
}

// C tile of 128 x 128 per block: 8 warps as 4 x 2, an 8 x 8 micro-tile per thread from
// float4 fragments (double-buffered over k), A stored k-major, GEMM_STAGES shared stages.
// VEC: B and C allow 16-byte accesses (N % 4 == 0, 16-byte aligned bases).
template <bool VEC>
__device__ __forceinline__ void gemm_body(int M, int N, int K, float alpha, const float* A,
        const float* B, float beta, float* C, float (*As)[GEMM_BK][GEMM_BM],
        float (*Bs)[GEMM_BK][GEMM_BN])
{
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int bm = blockIdx.y * GEMM_BM;
    const int bn = blockIdx.x * GEMM_BN;

    const int a_k = lane & 7;
    const int a_m = warp * 4 + (lane >> 3);
    bool a_ok[4];
    const float* a_src[4];
    for (int i = 0; i < 4; ++i) {
        const int row = bm + a_m + 32 * i;
        a_ok[i] = row < M;
        a_src[i] = A + (size_t)(a_ok[i] ? row : M - 1) * (size_t)K;
    }
    const int b_k = warp;
    const int b_c = bn + (VEC ? lane * 4 : lane);

    // copies of the tile starting at k0 into stage s (zero fill past M, N, K)
    auto load_tile = [&](int k0, int s) {
        for (int j = 0; j < GEMM_BK / 8; ++j) {
            const int ka = k0 + 8 * j + a_k;
            const bool ka_ok = ka < K;
            const int ka_c = ka_ok ? ka : 0;
            for (int i = 0; i < 4; ++i)
                gemm_copy4(&As[s][8 * j + a_k][a_m + 32 * i], a_src[i] + ka_c, ka_ok && a_ok[i]);
        }
        for (int j = 0; j < GEMM_BK / 8; ++j) {
            const int kb = k0 + 8 * j + b_k;
            const bool kb_ok = kb < K;
            const float* bp = B + (size_t)(kb_ok ? kb : 0) * (size_t)N;
            if (VEC) {
                const bool ok = kb_ok && b_c < N;
                gemm_copy16(&Bs[s][8 * j + b_k][b_c - bn], bp + (b_c < N ? b_c : 0), ok);
            } else {
                for (int i = 0; i < 4; ++i) {
                    const int c = b_c + 32 * i;
                    gemm_copy4(&Bs[s][8 * j + b_k][c - bn], bp + (c < N ? c : 0), kb_ok && c < N);
                }
            }
        }
        gemm_commit();
    };

    const int wm = warp >> 1;
    const int wn = warp & 1;
    const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2);
    const int tn = (lane & 1) | ((lane >> 1) & 6);
    const int m_off = wm * 32 + tm * 4;
    const int n_off = wn * 64 + tn * 4;

    float acc[8][8];
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;

    const int ntiles = (K + GEMM_BK - 1) / GEMM_BK;

    for (int s = 0; s < GEMM_STAGES - 1; ++s)
        load_tile(s * GEMM_BK, s);
    gemm_wait_stage();
    __syncthreads();

    int cur = 0;
    int nxt = GEMM_STAGES - 1;
    for (int t = 0; t < ntiles; ++t) {
        load_tile((t + GEMM_STAGES - 1) * GEMM_BK, nxt);

        float4 fa[2][2], fb[2][2];
        fa[0][0] = *reinterpret_cast<const float4*>(&As[cur][0][m_off]);
        fa[0][1] = *reinterpret_cast<const float4*>(&As[cur][0][m_off + 16]);
        fb[0][0] = *reinterpret_cast<const float4*>(&Bs[cur][0][n_off]);
        fb[0][1] = *reinterpret_cast<const float4*>(&Bs[cur][0][n_off + 32]);
        for (int k = 0; k < GEMM_BK; ++k) {
            const int f = k & 1;
            if (k + 1 < GEMM_BK) {
                fa[f ^ 1][0] = *reinterpret_cast<const float4*>(&As[cur][k + 1][m_off]);
                fa[f ^ 1][1] = *reinterpret_cast<const float4*>(&As[cur][k + 1][m_off + 16]);
                fb[f ^ 1][0] = *reinterpret_cast<const float4*>(&Bs[cur][k + 1][n_off]);
                fb[f ^ 1][1] = *reinterpret_cast<const float4*>(&Bs[cur][k + 1][n_off + 32]);
            }
            const float a[8] = {fa[f][0].x, fa[f][0].y, fa[f][0].z, fa[f][0].w,
                                fa[f][1].x, fa[f][1].y, fa[f][1].z, fa[f][1].w};
            const float b[8] = {fb[f][0].x, fb[f][0].y, fb[f][0].z, fb[f][0].w,
                                fb[f][1].x, fb[f][1].y, fb[f][1].z, fb[f][1].w};
            for (int i = 0; i < 8; ++i)
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = a[i] * b[j] + acc[i][j];
        }

        gemm_wait_stage();
        __syncthreads();
        cur = cur == GEMM_STAGES - 1 ? 0 : cur + 1;
        nxt = nxt == GEMM_STAGES - 1 ? 0 : nxt + 1;
    }
    gemm_wait_all();

    // epilogue: C = alpha * acc + beta * C, predicated at the edges
    for (int i = 0; i < 8; ++i) {
        const int row = bm + m_off + (i < 4 ? i : 12 + i);
        if (row >= M) continue;
        float* c_row = C + (size_t)row * (size_t)N;
        for (int h = 0; h < 2; ++h) {
            const int col = bn + n_off + h * 32;
            for (int j = 0; j < 4; ++j) {
                if (col + j < N) {
                    float* p = c_row + col + j;
                    *p = alpha * acc[i][h * 4 + j] + beta * *p;
                }
            }
        }
    }
}

extern "C" __global__ void gemm(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C)
{
    __shared__ __align__(16) float As[GEMM_STAGES][GEMM_BK][GEMM_BM];
    __shared__ __align__(16) float Bs[GEMM_STAGES][GEMM_BK][GEMM_BN];
    const unsigned long long addr_bits = reinterpret_cast<unsigned long long>(B) |
                                         reinterpret_cast<unsigned long long>(C);
    const bool vec = ((N & 3) == 0) && ((addr_bits & 15ull) == 0);
    if (vec)
        gemm_body<true>(M, N, K, alpha, A, B, beta, C, As, Bs);
    else
        gemm_body<false>(M, N, K, alpha, A, B, beta, C, As, Bs);
}
