// Local pointer aliases and pointers that advance, in the style of hand-tuned kernels
// (constexpr sizes, pointer bumps). The marks after "acc:" are read by
// tests/model/test_accesses.py (its docstring gives the format).
constexpr int BM = 64;
constexpr int BN = 64;
constexpr int BK = 8;

__global__ void row_sum(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const float* row = x + blockIdx.x * n;
    const float* mine = row + threadIdx.x;
    float s = 0.f;
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        s += row[j];  // acc: read global x idx bx*n + j
    float* dst = &y[blockIdx.x];
    const float* alias = mine;
    *dst = s + alias[n];  // acc: write global y idx bx; read global x idx bx*n + tx + n
}

// a block of BM x BN outputs; blockDim = (BK, BM)
__global__ void gemm_bumped(int M, int N, int K, const float* A, const float* B, float* C)
{
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    A += blockIdx.y * BM * K;
    B += blockIdx.x * BN;
    C += blockIdx.y * BM * N + blockIdx.x * BN;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        As[threadIdx.y][threadIdx.x] = A[threadIdx.y * K + threadIdx.x];  // acc: write shared As idx 8*ty + tx; read global A idx 64*by*K + k0 + ty*K + tx
        Bs[threadIdx.x][threadIdx.y] = B[threadIdx.x * N + threadIdx.y];  // acc: write shared Bs idx 64*tx + ty; read global B idx 64*bx + k0*N + tx*N + ty
        __syncthreads();
        A += BK;
        B += BK * N;
        for (int kk = 0; kk < BK; ++kk)
            acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];  // acc: read shared As idx 8*ty + kk; read shared Bs idx 64*kk + tx
        __syncthreads();
    }
    C[threadIdx.y * N + threadIdx.x] = acc;  // acc: write global C idx 64*by*N + 64*bx + ty*N + tx
    C[0] = A[0];  // acc: write global C idx 64*by*N + 64*bx; read global A idx ? -- advanced in a loop of unknown trip count
}

// the same walk, counted by tiles instead of by elements
__global__ void gemm_counted(int N, int K, const float* A, float* out)
{
    const float* a = A + blockIdx.y * K;
    float s = 0.f;
    for (int t = 0; t < K / BK; t++) {
        s += a[threadIdx.x];  // acc: read global A idx by*K + 8*t + tx
        a = a + BK;
    }
    out[blockIdx.y] = s;  // acc: write global out idx by
}

__global__ void copy_bumped(const int* src, int* dst, int n)
{
    const int* p = src + blockIdx.x * n;
    int* q = dst + blockIdx.x * n;
    for (int i = 0; i < n; ++i) {
        *q = *p;  // acc: write global dst idx bx*n + i; read global src idx bx*n + i
        ++p;
        q++;
    }
    for (int i = 0; i < 4; ++i, --q)
        *q = 0;  // acc: write global dst idx ? -- advanced in a loop of unknown trip count
}

__global__ void split_pairs(const float2* in, float* out, int n)
{
    const float2* s = in + blockIdx.x * n;
    float* d = out + 2 * blockIdx.x * n;
    for (int k = 0; k < n; k++) {
        float2 v = *s++;  // acc: read global in idx bx*n + k
        *d++ = v.x;  // acc: write global out idx 2*bx*n + 2*k
        *d++ = v.y;  // acc: write global out idx 2*bx*n + 2*k + 1
    }
}

__global__ void fill_range(float* begin, const float* end)
{
    float* p = begin + threadIdx.x;
    while (p < end) {
        *p = 0.f;  // acc: write global begin idx tx + 32*#iter@-1
        p += 32;
    }
    float* q = begin;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 8; ++c)
            *(q++) = 1.f;  // acc: write global begin idx 8*r + c
}

__global__ void compact(const int* flags, int* out, int n)
{
    int* w = out + blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if (flags[i])  // acc: read global flags idx i
            *w++ = i;  // acc: write global out idx ? -- advanced under a condition
    }
    int* r = out;
    for (int i = 0; i < n; ++i) {
        r[1] = i;  // acc: write global out idx ? -- re-assigned in the loop
        r = out + flags[i];  // acc: read global flags idx i
    }
    int* c = n > 4 ? out : out + n;
    c[0] = 1;  // acc: write global out idx ? -- chosen by a condition
}

__global__ void tile_walk(const float* src, float* __restrict__ dst, int ld, int steps)
{
    src += threadIdx.y * ld + threadIdx.x;
    dst += blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    for (int t = 0; t < steps; ++t, src += 16)
        s += src[0];  // acc: read global src idx ty*ld + tx + 16*t
    *dst = s;  // acc: write global dst idx bx*bdx + tx
}
