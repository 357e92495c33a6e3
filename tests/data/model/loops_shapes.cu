// Loop shapes: halving and doubling steps in every spelling, counted loops, pointers that
// a loop advances, and loops with no shape to read. Marks as in loops_stride.cu.
#define TK 8

__device__ float tree_sum(float* buf, int tid)
{
    for (int s = 16; s > 0; s >>= 1)  // loop: halving trips=5
        buf[tid] += buf[tid + s];
    for (int s = 16; s > 0; s /= 2)  // loop: halving trips=5
        buf[tid] += buf[tid + s];
    for (int s = 16; s >= 1; s = s / 2)  // loop: halving trips=5
        buf[tid] += buf[tid + s];
    for (int s = 8; s; s = s >> 1)  // loop: halving trips=4
        buf[tid] += buf[tid + s];
    unsigned h = blockDim.x / 2;
    while (h > 0) {  // loop: halving
        if (tid < h)
            buf[tid] += buf[tid + h];
        __syncthreads();
        h >>= 1;
    }
    return buf[0];
}

__device__ void up_sweep(int* a, int tid, int n)
{
    for (int d = 1; d < 32; d <<= 1)  // loop: doubling trips=5
        a[tid] += (tid >= d) ? a[tid - d] : 0;
    for (int d = 1; d < 32; d *= 2)  // loop: doubling trips=5
        a[tid] += a[tid ^ d];
    for (int d = 1; d < n; d = d * 2)  // loop: doubling
        a[tid] += a[(tid + d) % n];
    for (int d = 1; d < 64; d = 2 * d)  // loop: doubling trips=6
        a[tid] -= a[tid & d];
    int span = 1;
    do {  // loop: doubling trips=3
        a[tid] += span;
        span = span << 1;
    } while (span < 8);
    for (int d = 1; d < 81; d *= 3)  // loop: unknown (tripled, neither halved nor doubled)
        a[tid] += d;
}

template <int BK>
__global__ void tile_mm(const float* A, const float* B, float* C, int K, int N)
{
    float acc = 0.0f;
    A += blockIdx.y * BK * K;
    B += blockIdx.x * BK;
    for (int k0 = 0; k0 < K; k0 += BK) {  // loop: counted adv=A:BK;B:BK*N
        for (int kk = 0; kk < BK; ++kk)  // loop: counted trips=None
            acc += A[threadIdx.y * K + kk] * B[kk * N + threadIdx.x];
        A += BK;
        B += BK * N;
    }
    const float* pa = A;
    const float* pb = B;
    for (int k = 0; k < TK; k++, pa += 1, pb += N)  // loop: counted trips=8 adv=pa:1;pb:N
        acc += *pa * *pb;
    int off = 0;
    for (int k = 0; k < TK; ++k) {  // loop: counted trips=8 adv=off:-TK;pa:-1
        off -= TK;
        pa--;
        acc += pa[off];
        if (acc > 1.0f)
            pb += 2;  // in a branch: not an advance
    }
    float run = 0.0f;
    for (int k = 0; k < 4; k++) {  // loop: counted trips=4
        const float v = pb[k];
        run += v;  // v is new each iteration: not an advance
        run = run + pa[k];  // a load: not an advance
    }
    C[blockIdx.y * N + blockIdx.x] = acc + run + off;
}

__global__ void no_shape(int* flags, int n)
{
    int i = 0;
    for (;;) {  // loop: unknown (no induction variable)
        if (flags[i] != 0)
            break;
        ++i;
    }
    for (int j = 0; j < n; ++j) {  // loop: unknown (the body also assigns j)
        if (flags[j] < 0)
            j += 2;
    }
    int w = 0;
    while (flags[w] > 0 && w < n)  // loop: unknown (the step is not read)
        w = flags[w];
    for (int b = n - 1; b >= 0; --b)  // loop: counted
        flags[b] = b;
}
