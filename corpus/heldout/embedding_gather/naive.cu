// kltrans: launch embedding_gather_naive grid=ceil_div(T * D, 256) block=256
// embedding_gather naive: out[t, d] = table[idx[t], d]; table is V x D float32
// (row-major), idx holds T int32 row indices, out is T x D. One thread per output
// element, scalar loads and stores.
extern "C" __global__ void embedding_gather_naive(const float* table, const int* idx, float* out,
                                                  int V, int D, int T)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < T * D) {
        int t = i / D;
        int d = i % D;
        out[i] = table[(size_t)idx[t] * D + d];
    }
}
