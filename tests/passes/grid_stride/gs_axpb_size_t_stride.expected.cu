// RUN: kltrans opt -p 'grid-stride{fold=false,stride=step,stride_form=bg,max_blocks=264}'
// GATE: tests/data/workloads/scale
// An axpb (y = alpha * x + beta) with a 64-bit index written blockDim.x * blockIdx.x +
// threadIdx.x, and fmaf: the loop strides by a named blockDim.x * gridDim.x;
// vectorize_stream/vs_axpb_after_grid_stride.cu continues from this output.
// kltrans: launch scale grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y,
                                 float alpha, float beta, int n) {
  size_t idx = (size_t)blockDim.x * blockIdx.x + threadIdx.x;
  const size_t step = blockDim.x * gridDim.x;
  for (; idx < n; idx += step) y[idx] = fmaf(alpha, x[idx], beta);
}
