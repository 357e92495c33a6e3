// RUN: kltrans opt -p 'vectorize-access{width=4,tail=assume}' --assume 'aligned(*,16)' --assume 'n%4==0'
// Integer clamp with a multi-line body, int4 accesses and no tail: the caller guarantees
// n % 4 == 0 (a fact from the context, like the alignment). The block size is a
// template parameter of the launch header.
// kltrans: launch clamp grid=ceil_div(n, BLOCK) block=BLOCK
template <int BLOCK>
__global__ void clamp(const int* in, int* out, int lo, int hi, int n) {
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid < n) {
    int v = in[gid];
    v = v < lo ? lo : v;
    out[gid] = v > hi ? hi : v;
  }
}
template __global__ void clamp<128>(const int*, int*, int, int, int);
