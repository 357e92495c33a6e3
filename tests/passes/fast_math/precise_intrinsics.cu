// RUN: kltrans opt -p 'precise-math' --assume 'tolerance(1e-4)'
// Every intrinsic becomes the operation it approximates, with the parentheses the
// operator form needs: (v - mean) / sigma, gain * (1.0f / sqrtf(var)).
__global__ void standardize(const float* __restrict__ x, float* __restrict__ y,
                            const float* __restrict__ stats, int n) {
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= n) return;
  float mean = stats[0];
  float var = stats[1];
  float gain = stats[2];
  float v = x[gid];
  float z = __fdividef(v - mean, gain * rsqrtf(var));
  y[gid] = fmaf(z, __expf(-z * z), mean);
}
