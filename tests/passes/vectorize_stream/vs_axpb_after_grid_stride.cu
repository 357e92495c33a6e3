// RUN: kltrans opt -p 'vectorize-stream{flag=aligned16,unroll=4,div=div,restrict=true}' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// The output of grid_stride/gs_axpb_size_t_stride.cu: a 64-bit idx declared before the
// loop and a named stride blockDim.x * gridDim.x; a flag named aligned16 is declared,
// four vectors in flight, __restrict__ vector views (no_alias from the context).
// kltrans: launch scale grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y,
                                 float alpha, float beta, int n) {
  size_t idx = (size_t)blockDim.x * blockIdx.x + threadIdx.x;
  const size_t step = blockDim.x * gridDim.x;
  for (; idx < n; idx += step) y[idx] = fmaf(alpha, x[idx], beta);
}
