// RUN: kltrans opt -p 'grid-stride{max_blocks=264,work=8}'
// GATE: corpus/reduce-sum
// A sum whose guarded block loads into a local first (long long index, threadIdx.x
// first): a folded grid-stride loop on a grid sized for 8 elements per thread;
// unroll_stride/us_total_after_grid_stride.cu continues from this output.
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
