// RUN: kltrans opt -p 'sink-invariant'
// CHECK-SKIP: no-aliasing-store: the loop writes y at line
// The loop overwrites y[0] at k = 0: y_0 holds the old value, which a load inside the loop
// would no longer see.
__global__ void center(float* y) {
  float* row = y + blockIdx.x * 16;
  const float y_0 = y[0];
  for (int k = 0; k < 16; ++k) row[k] = row[k] - y_0;
}
