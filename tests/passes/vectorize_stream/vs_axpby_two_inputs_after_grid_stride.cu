// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_axpby
// The index declared before the loop (grid-stride's unfolded form), one declaration of two
// temporaries from the two inputs; the pass writes the flag over x, y and z.
// kltrans: launch axpby grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void axpby(const float* x, const float* y, float* z, float a, float b, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int nthreads = gridDim.x * blockDim.x;
  for (; k < n; k += nthreads) {
    float xk = x[k], yk = y[k];
    z[k] = a * xk + b * yk;
  }
}
