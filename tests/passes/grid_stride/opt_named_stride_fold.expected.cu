// RUN: kltrans opt -p 'one-per-thread'
// GATE: corpus/reduce-sum
// A grid-stride sum with a named stride (const size_t nthreads = ...), a clamped size_t
// count and a grid sized for 32 elements per thread: the loop becomes one element per
// thread, the stride's declaration goes with it, and the grid becomes ceil_div(n, 256).
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    size_t i = tid;
    if (i < count) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
