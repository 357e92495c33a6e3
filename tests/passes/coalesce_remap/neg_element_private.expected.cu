// RUN: kltrans opt -p 'coalesce-remap'
// CHECK-SKIP: element-private: which the loop writes, at another element
// In place, each element plus its right neighbour: inside one thread's chunk the
// neighbour is read before it is written; after the remap the neighbour belongs to the
// next thread, which may already have written it.
// kltrans: launch add_next grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void add_next(float* x, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i + 1 < n) x[i] = x[i] + x[i + 1];
  }
}
