// RUN: kltrans opt -p 'precise-math{ops=div}'
// CHECK-SKIP: float-operands: are integers: the operator form would divide integers
// __fdividef converts both counts to float; count / total would be an integer division.
__global__ void fraction(const int* hits, float* frac, int total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int count = hits[i];
    frac[i] = __fdividef(count, total);
  }
}
