// RUN: kltrans opt -p vector-c-update{guard=VEC}
// CHECK-SKIP: guard-ok: is not guarded by N % 4 == 0
// The flag's `true` instantiation is dispatched on alignment only: with N % 4 != 0
// the rows of C are not 16-byte aligned.
template <bool VEC>
__device__ void body(int N, const float* acc, float* C)
{
    const int row = blockIdx.y;
    const int col = 4 * threadIdx.x;
    float* c_row = C + (size_t)row * N;
    for (int j = 0; j < 4; ++j) {
        if (col + j < N) {
            float* p = c_row + col + j;
            *p = *p + acc[j];
        }
    }
}
// kltrans: launch k grid=(1, 8) block=64
extern "C" __global__ void k(int N, const float* acc, float* C)
{
    if ((reinterpret_cast<unsigned long long>(C) & 15ull) == 0)
        body<true>(N, acc, C);
    else
        body<false>(N, acc, C);
}
