// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_axpby
// One store reading two inputs (x[i] and y[i]): both are loaded once as float4, the
// statement runs per lane (no locals, so no blocks). Index blockIdx.x * blockDim.x +
// threadIdx.x, stride blockDim.x * gridDim.x.
// kltrans: launch axpby grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void axpby(const float* x, const float* y, float* z, float a, float b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    z[i] = a * x[i] + b * y[i];
}
