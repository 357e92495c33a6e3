// RUN: kltrans opt -p 'drop-stream-hints'
// CHECK-SKIP: intrinsic-call: __ldg is called with 2 argument(s), not 1
// The file overloads __ldg with a helper of its own (pointer, offset): that call is not
// the CUDA intrinsic, and dropping it would not be a plain load of its first argument.
__device__ __forceinline__ float __ldg(const float* p, int k) { return __ldg(p + 2 * k); }
// kltrans: launch gather2 grid=ceil_div(n, 256) block=256
extern "C" __global__ void gather2(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __ldg(x, i);
}
