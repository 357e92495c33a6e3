// RUN: kltrans opt -p 'stream-hints{store=none}'
// Row sums through a local row pointer and a dereference: row[j] walks the row once
// (j is the loop variable), *scale_at (a pointer into in) is read once; only loads are hinted
// (store=none), the result store stays plain.
// kltrans: launch row_sum grid=rows block=128
extern "C" __global__ void row_sum(const float* __restrict__ x, const int* __restrict__ in,
                                   float* __restrict__ out, int rows, int cols) {
  const float* row = x + (size_t)blockIdx.x * cols;
  float acc = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    acc += row[j];
  }
  const int* scale_at = in + blockIdx.x;
  acc *= (float)*scale_at;
  atomicAdd(&out[blockIdx.x], acc);
}
