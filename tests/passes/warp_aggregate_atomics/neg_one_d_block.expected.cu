// RUN: kltrans opt -p 'warp-aggregate-atomics' --arch sm_80
// CHECK-SKIP: one-d-block: uses threadIdx.y: the lane is not threadIdx.x & 31
// A 2-D block (16 x 16): lane ids are not threadIdx.x & 31, so the leader test would
// pick no lane or two.
// kltrans: launch img_hist grid=(ceil_div(w, 16), ceil_div(h, 16)) block=(16, 16)
extern "C" __global__ void img_hist(const unsigned char* __restrict__ img,
                                   unsigned int* __restrict__ bins, int w, int h) {
  int x = blockIdx.x * 16 + threadIdx.x;
  int y = blockIdx.y * 16 + threadIdx.y;
  if (x < w && y < h) atomicAdd(&bins[img[y * w + x]], 1u);
}
