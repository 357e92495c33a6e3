// RUN: kltrans opt -p unstage-shared
// GATE: corpus/sgemm
// ROUNDTRIP: none: stage-shared stages a 1-D stretch that a loop reads; these are tiles
// A 1-D block of 8 x 8 threads split with / and %, A and B walked by advancing the
// pointers after the barrier (A += T; B += T * N). The tiles are read from A and B
// again: an advance between the copy and a read is undone in the index.
#define T 8
// kltrans: launch mm_advance grid=(ceil_div(M, T), ceil_div(N, T)) block=T*T
__global__ void mm_advance(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C)
{
    const int i = threadIdx.x / T, j = threadIdx.x % T;
    const int gi = blockIdx.x * T + i, gj = blockIdx.y * T + j;
    A += (size_t)blockIdx.x * T * K;
    B += blockIdx.y * T;
    float s = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        A += T;
        B += T * N;
        for (int k = 0; k < T; ++k)
            s += ((gi < M && k0 + k < K) ? A[i * K + k - T] : 0.0f) * ((k0 + k < K && gj < N) ? B[k * N + j - (T * N)] : 0.0f);
    }
    if (gi < M && gj < N)
        C[(size_t)gi * N + gj] = alpha * s + beta * C[(size_t)gi * N + gj];
}
