// RUN: kltrans opt -p 'unroll-stride{factor=8,var=k}'
// GATE: corpus/reduce-sum
// The output of grid_stride/gs_sum_block_load.cu: a folded long long index and a body
// that loads into a const local first; 8 loads in flight, the inner counter named k.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 2048), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float total = 0.0f;
    for (long long idx = threadIdx.x + (long long)blockIdx.x * blockDim.x; idx < n; idx += blockDim.x * gridDim.x) {
        const float v = x[idx];
        total += v;
    }
    atomicAdd(out, total);
}
