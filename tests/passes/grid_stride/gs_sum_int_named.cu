// RUN: kltrans opt -p 'grid-stride{fold=false,stride=nthreads,stride_type=int,stride_form=gb}'
// GATE: corpus/reduce-sum
// A sum with a 32-bit index and a named int stride: grid-stride keeps the declaration
// and loops with `for (; i < n; i += nthreads)`; unroll_stride/us_int_after_grid_stride.cu
// continues from this output.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
#define UNROLL 4

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float acc = 0.0f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc += x[i];
    atomicAdd(out, acc);
}
