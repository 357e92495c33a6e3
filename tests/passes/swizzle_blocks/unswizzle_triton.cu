// RUN: kltrans opt -p unswizzle-blocks
// ROUNDTRIP: none: the Triton-style spelling (pid, num_pid_in_group, group_size_m) is not the one swizzle-blocks writes
// GATE: corpus/sgemm
// Triton's "grouped ordering" written in CUDA with a template group size: the
// run is evaluated with GROUP_M = 1, 2, 3, 4, 8 and is one to one for each.
template <int GROUP_M>
__device__ void gemm_body(int M, int N, int K, float alpha, const float* A, const float* B,
                          float beta, float* C)
{
    int num_pid_in_group = GROUP_M * gridDim.x;
    int pid = blockIdx.x + blockIdx.y * gridDim.x;
    int group_id = pid / num_pid_in_group;
    int first_pid_m = group_id * GROUP_M;
    int group_size_m = min(gridDim.y - first_pid_m, GROUP_M);
    int pid_m = first_pid_m + (pid % group_size_m);
    int pid_n = (pid % num_pid_in_group) / group_size_m;
    int row = pid_m * blockDim.y + threadIdx.y;
    int col = pid_n * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        int k = 0;
        while (k < K) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
            ++k;
        }
        C[(size_t)row * N + col] = alpha * acc + beta * C[(size_t)row * N + col];
    }
}
// kltrans: launch gemm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void gemm(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C)
{
    gemm_body<4>(M, N, K, alpha, A, B, beta, C);
}
