// sgemm expert: C = alpha * A * B + beta * C, float32, row-major, plain FFMA (no tensor cores).
// Mechanisms: 128x128x16 block tile; 256 threads; 8x8 register micro-tile per thread (register
// blocking, as 2x2 quads of 4x4); warp tiling (8 warps as 4x2, warp tile 32x64) with a lane
// layout where lanes n and n^1 share the A fragment and n and n^2 the B fragment (broadcast
// LDS.128, conflict-free per quarter-warp); A tile stored transposed (k-major) in shared memory
// so both operands are read as float4; A tile rows padded to 132 floats so the transposed
// stores are conflict-free; 2-stage shared-memory pipeline filled by cp.async (sm_80+; A as
// 4-byte copies that transpose on the fly, B as 16-byte cp.async.cg), one barrier per tile;
// double-buffered register fragments; fully unrolled inner loops; grouped block rasterization
// (8 block-rows) for L2 reuse; float4 C read-modify-write; __launch_bounds__(256, 2).
// Boundaries: every copy is predicated with zero fill (src-size 0) past M, N and K, so the K
// tail needs no extra loop; stores are predicated; when N % 4 or a base pointer rules out
// 16-byte accesses to B/C, a scalar-copy instantiation of the same body runs (A never needs
// K % 4 == 0). Without cp.async (CPU emulator, < sm_80) the copies are plain loads/stores.
// kltrans: launch sgemm_expert grid=(ceil_div(N, 128), ceil_div(M, 128)) block=256

#define SG_BM 128
#define SG_BN 128
#ifndef SG_BK
#define SG_BK 16  // 8 or 16; static shared memory = SG_STAGES * SG_BK * 1040 bytes (<= 48 KB)
#endif
#define SG_APAD 4
#ifndef SG_STAGES
#define SG_STAGES 2  // >= 2 (BK 8: 3 or 4 also fit)
#endif
#define SG_THREADS 256
#define SG_GROUP 8


// 4-byte global -> shared copy; zero fill when !ok (src is then not read).
__device__ __forceinline__ void sg_copy4(float* dst, const float* src, bool ok)
{
    *dst = ok ? *src : 0.0f;
}

// 16-byte global -> shared copy (both 16-byte aligned); zero fill when !ok.
__device__ __forceinline__ void sg_copy16(float* dst, const float* src, bool ok)
{
    *reinterpret_cast<float4*>(dst) =
        ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

__device__ __forceinline__ void sg_commit()
{
}

// Wait until at most SG_STAGES - 2 committed groups are still in flight.
__device__ __forceinline__ void sg_wait_stage()
{
}

// Wait for every copy of this thread (the zero-fill copies issued past K included).
__device__ __forceinline__ void sg_wait_all()
{
}

template <bool VEC>
__device__ __forceinline__ void sgemm_expert_body(int M, int N, int K, float alpha,
                                                  const float* A,
                                                  const float* B, float beta,
                                                  float* C,
                                                  float (*As)[SG_BK][SG_BM],
                                                  float (*Bs)[SG_BK][SG_BN])
{
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    // Block rasterization for L2 reuse: consecutive block ids walk down groups of SG_GROUP
    // block-rows (column by column) instead of along whole block-rows (a bijection of the grid).
    const int gx = gridDim.x, gy = gridDim.y;
    const int id = blockIdx.y * gx + blockIdx.x;
    const int group = id / (SG_GROUP * gx);
    const int first_row = group * SG_GROUP;
    const int rows = min(SG_GROUP, gy - first_row);
    const int local = id - group * SG_GROUP * gx;
    const int bm = (first_row + local % rows) * SG_BM;
    const int bn = (local / rows) * SG_BN;

    // ---- copy map, A (128 x BK per tile): a warp copies 4 rows x 8 k per instruction (four
    // 32-byte row segments), rows a_m + 32 * i, k a_k + 8 * j; stored transposed As[k][m].
    const int a_k = lane & 7;
    const int a_m = warp * 4 + (lane >> 3);  // 0..31
    // Source addresses are clamped into the matrix (row min(row, M-1), k or column 0 past the
    // edge), so a zero-filled copy never carries a wild address.
    bool a_ok[4];
    const float* a_src[4];
    for (int i = 0; i < 4; ++i) {
        const int row = bm + a_m + 32 * i;
        a_ok[i] = row < M;
        a_src[i] = A + (size_t)(a_ok[i] ? row : M - 1) * (size_t)K;
    }
    // ---- copy map, B (BK x 128 per tile): warp w copies k-rows w + 8 * j; VEC: one 16-byte
    // piece per thread and row (cols 4*lane..), scalar: cols lane + 32 * i.
    const int b_k = warp;
    const int b_c = bn + (VEC ? lane * 4 : lane);

    // Issues the copies of the tile starting at k0 into stage s (zero fill outside).
    auto load_tile = [&](int k0, int s) {
        for (int j = 0; j < SG_BK / 8; ++j) {
            const int ka = k0 + 8 * j + a_k;
            const bool ka_ok = ka < K;
            const int ka_c = ka_ok ? ka : 0;
            for (int i = 0; i < 4; ++i)
                sg_copy4(&As[s][8 * j + a_k][a_m + 32 * i], a_src[i] + ka_c, ka_ok && a_ok[i]);
        }
        for (int j = 0; j < SG_BK / 8; ++j) {
            const int kb = k0 + 8 * j + b_k;
            const bool kb_ok = kb < K;
            const float* bp = B + (size_t)(kb_ok ? kb : 0) * (size_t)N;
            if (VEC) {
                const bool ok = kb_ok && b_c < N;  // N % 4 == 0: all four or none
                sg_copy16(&Bs[s][8 * j + b_k][b_c - bn], bp + (b_c < N ? b_c : 0), ok);
            } else {
                for (int i = 0; i < 4; ++i) {
                    const int c = b_c + 32 * i;
                    sg_copy4(&Bs[s][8 * j + b_k][c - bn], bp + (c < N ? c : 0), kb_ok && c < N);
                }
            }
        }
        sg_commit();
    };

    // ---- compute map: warp (wm, wn) owns rows wm*32.., cols wn*64..; lane bits
    // b1,b4 -> tm and b0,b2,b3 -> tn
    const int wm = warp >> 1;
    const int wn = warp & 1;
    const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2);
    const int tn = (lane & 1) | ((lane >> 1) & 6);
    const int m_off = wm * 32 + tm * 4;  // rows m_off..+3 and m_off+16..+19
    const int n_off = wn * 64 + tn * 4;  // cols n_off..+3 and n_off+32..+35

    float acc[8][8];
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;

    const int ntiles = (K + SG_BK - 1) / SG_BK;

    // Prologue: tiles 0 .. SG_STAGES-2 in flight, wait for tile 0.
    for (int s = 0; s < SG_STAGES - 1; ++s)
        load_tile(s * SG_BK, s);
    sg_wait_stage();
    __syncthreads();

    int cur = 0;                   // stage holding tile t
    int nxt = SG_STAGES - 1;       // stage receiving tile t + SG_STAGES - 1
    for (int t = 0; t < ntiles; ++t) {
        // Stage nxt was last read in iteration t-1, before the barrier that ended it. Past K
        // the copies only zero-fill, so this needs no branch.
        load_tile((t + SG_STAGES - 1) * SG_BK, nxt);

        float4 fa[2][2], fb[2][2];
        fa[0][0] = *reinterpret_cast<const float4*>(&As[cur][0][m_off]);
        fa[0][1] = *reinterpret_cast<const float4*>(&As[cur][0][m_off + 16]);
        fb[0][0] = *reinterpret_cast<const float4*>(&Bs[cur][0][n_off]);
        fb[0][1] = *reinterpret_cast<const float4*>(&Bs[cur][0][n_off + 32]);
        for (int k = 0; k < SG_BK; ++k) {
            const int f = k & 1;
            if (k + 1 < SG_BK) {
                fa[f ^ 1][0] = *reinterpret_cast<const float4*>(&As[cur][k + 1][m_off]);
                fa[f ^ 1][1] = *reinterpret_cast<const float4*>(&As[cur][k + 1][m_off + 16]);
                fb[f ^ 1][0] = *reinterpret_cast<const float4*>(&Bs[cur][k + 1][n_off]);
                fb[f ^ 1][1] = *reinterpret_cast<const float4*>(&Bs[cur][k + 1][n_off + 32]);
            }
            const float a[8] = {fa[f][0].x, fa[f][0].y, fa[f][0].z, fa[f][0].w,
                                fa[f][1].x, fa[f][1].y, fa[f][1].z, fa[f][1].w};
            const float b[8] = {fb[f][0].x, fb[f][0].y, fb[f][0].z, fb[f][0].w,
                                fb[f][1].x, fb[f][1].y, fb[f][1].z, fb[f][1].w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = a[i] * b[j] + acc[i][j];
        }

        sg_wait_stage();  // tile t+1 has landed (this thread's copies) ...
        __syncthreads();  // ... everyone's, and everyone is done reading stage cur
        cur = cur == SG_STAGES - 1 ? 0 : cur + 1;
        nxt = nxt == SG_STAGES - 1 ? 0 : nxt + 1;
    }
    sg_wait_all();  // no copy may still be writing shared memory when the block retires

    // ---- epilogue: C = alpha * acc + beta * C, C read once, predicated at the edges
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = bm + m_off + (i < 4 ? i : 12 + i);  // i>=4 -> m_off+16+(i-4)
        if (row >= M) continue;
        float* c_row = C + (size_t)row * (size_t)N;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = bn + n_off + h * 32;
            if (VEC) {
                if (col < N) {  // N % 4 == 0: the whole float4 is inside
                    float4* p = reinterpret_cast<float4*>(c_row + col);
                    float4 c = *p;
                    c.x = alpha * acc[i][h * 4 + 0] + beta * c.x;
                    c.y = alpha * acc[i][h * 4 + 1] + beta * c.y;
                    c.z = alpha * acc[i][h * 4 + 2] + beta * c.z;
                    c.w = alpha * acc[i][h * 4 + 3] + beta * c.w;
                    *p = c;
                }
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    if (col + j < N) {
                        float* p = c_row + col + j;
                        *p = alpha * acc[i][h * 4 + j] + beta * *p;
                    }
                }
            }
        }
    }
}

extern "C" __global__ void
sgemm_expert(int M, int N, int K, float alpha, const float* A,
             const float* B, float beta, float* C)
{
    __shared__ __align__(16) float As[SG_STAGES][SG_BK][SG_BM];
    __shared__ __align__(16) float Bs[SG_STAGES][SG_BK][SG_BN];
    const unsigned long long addr_bits = reinterpret_cast<unsigned long long>(B) |
                                         reinterpret_cast<unsigned long long>(C);
    const bool vec = ((N & 3) == 0) && ((addr_bits & 15ull) == 0);
    if (vec)
        sgemm_expert_body<true>(M, N, K, alpha, A, B, beta, C, As, Bs);
    else
        sgemm_expert_body<false>(M, N, K, alpha, A, B, beta, C, As, Bs);
}
