// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// A masked copy writes out[i] only where the mask is set: out's vector is loaded first,
// so the lanes the mask skips are written back unchanged.
// kltrans: launch masked_copy grid=ceil_div(n, 256) block=256
__global__ void masked_copy(const int* mask, const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (mask[i] != 0) out[i] = in[i];
  }
}
