// RUN: kltrans opt -p 'grid-stride{max_blocks=264,fold=false,stride=nthreads,stride_form=bg,work=8}'
// GATE: corpus/reduce-sum
// One element per thread folded into a per-thread sum that one atomicAdd publishes: the
// fold may take many elements per thread, so the guard becomes a grid-stride loop over
// a named stride, on a grid sized for 8 elements per thread and capped at 264 blocks.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 2048), 264) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = threadIdx.x + (size_t)blockDim.x * blockIdx.x;
    const size_t nthreads = blockDim.x * gridDim.x;
    float acc = 0.0f;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
