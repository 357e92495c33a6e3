// RUN: kltrans opt -p 'vectorize-stream'
// The int4 path: two int inputs, a local fixed up by an if statement, an integer max in
// the store (no int test workload: the CPU gate covers the float bodies).
// kltrans: launch abs_prod grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void abs_prod(const int* x, const int* w, int* y, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    int v = x[i] * w[i];
    if (v < 0) v = -v;
    y[i] = max(v, 3);
  }
}
