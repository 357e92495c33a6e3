// RUN: kltrans opt -p 'stream-hints{arrays=p}' --assume 'no_alias(*)'
// CHECK-SKIP: hint-type: p points to Pair: __ldcs has no overload for it
// A struct element: __ldcs/__stcs exist only for built-in scalars and vectors, so a
// Pair cannot be loaded with a hint.
struct Pair { float a, b; };
// kltrans: launch pair_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void pair_sum(const Pair* p, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Pair v = p[i];
    y[i] = v.a + v.b;
  }
}
