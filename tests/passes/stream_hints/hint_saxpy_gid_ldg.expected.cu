// RUN: kltrans opt -p 'stream-hints{load=ldg,address=offset}'
// A saxpy written with a named gid, the index spelled threadIdx.x + blockDim.x *
// blockIdx.x and a BLOCK macro; __restrict__ rules out overlap, so x and y take the
// read-only path and out the streaming store, addresses spelled as pointer + offset.
#define BLOCK 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// kltrans: launch saxpy grid=CEIL_DIV(n, BLOCK) block=BLOCK
extern "C" __global__ void saxpy(const float* __restrict__ x, const float* __restrict__ y,
                                 float* __restrict__ out, float alpha, int n) {
  const int gid = threadIdx.x + blockDim.x * blockIdx.x;
  if (gid >= n) return;
  __stcs(out + gid, alpha * __ldg(x + gid) + __ldg(y + gid));
}
