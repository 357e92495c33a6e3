// RUN: kltrans opt -p 'unroll-stride{factor=8,var=k}'
// GATE: corpus/reduce-sum
// The output of grid_stride/gs_sum_block_load.cu: a folded long long index and a body
// that loads into a const local first; 8 loads in flight, the inner counter named k.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 2048), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float total = 0.0f;
    long long idx = threadIdx.x + (long long)blockIdx.x * blockDim.x;
    for (; idx + 7 * blockDim.x * gridDim.x < n; idx += 8 * blockDim.x * gridDim.x) {
        float v[8];
        for (int k = 0; k < 8; ++k) {
            v[k] = x[idx + k * blockDim.x * gridDim.x];
        }
        for (int k = 0; k < 8; ++k) {
            total += v[k];
        }
    }
    for (; idx < n; idx += blockDim.x * gridDim.x) {
        const float v = x[idx];
        total += v;
    }
    atomicAdd(out, total);
}
