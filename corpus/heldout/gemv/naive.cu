// kltrans: launch gemv_naive grid=ceil_div(M, 256) block=256
// gemv naive: y[m] = sum over k of A[m, k] * x[k]; A is M x N float32 (row-major),
// float32 accumulation. One thread per output row, one scalar pass over the row.
extern "C" __global__ void gemv_naive(const float* A, const float* x, float* y, int M, int N)
{
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M) {
        return;
    }
    const float* a = A + (size_t)m * N;
    float s = 0.0f;
    for (int k = 0; k < N; ++k) {
        s += a[k] * x[k];
    }
    y[m] = s;
}
