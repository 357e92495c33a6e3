// RUN: kltrans opt -p 'fast-math' --assume 'tolerance(2e-5)'
// GATE: corpus/softmax
// One block of 256 threads per row with a shared-memory tree reduction. expf becomes
// __expf (2 + floor(1.173|x|) ulp: 1.3e-5 over the whole finite range, within the
// workload's rtol of 2e-5) and the reciprocal 1.0f / total becomes __fdividef.
// kltrans: launch softmax grid=rows block=256
#define THREADS 256

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  __shared__ float red[THREADS];
  const int row = blockIdx.x;
  const int tid = threadIdx.x;
  const float* src = x + (size_t)row * cols;
  float* dst = y + (size_t)row * cols;

  float m = -INFINITY;
  for (int c = tid; c < cols; c += THREADS) m = fmaxf(m, src[c]);
  red[tid] = m;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();

  float sum = 0.0f;
  for (int c = tid; c < cols; c += THREADS) {
    float e = expf(src[c] - m);
    dst[c] = e;
    sum += e;
  }
  red[tid] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  float inv = 1.0f / red[0];
  for (int c = tid; c < cols; c += THREADS) dst[c] *= inv;
}
