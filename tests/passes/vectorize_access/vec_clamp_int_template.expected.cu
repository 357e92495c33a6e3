// RUN: kltrans opt -p 'vectorize-access{width=4,tail=assume}' --assume 'aligned(*,16)' --assume 'n%4==0'
// Integer clamp with a multi-line body, int4 accesses and no tail: the caller guarantees
// n % 4 == 0 (a fact from the context, like the alignment). The block size is a
// template parameter of the launch header.
// kltrans: launch clamp grid=ceil_div(ceil_div(n, 4), BLOCK) block=BLOCK
template <int BLOCK>
__global__ void clamp(const int* in, int* out, int lo, int hi, int n) {
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * gid + 3 < n) {
    const int4 in4 = reinterpret_cast<const int4*>(in)[gid];
    int4 out4;
    {
      int v = in4.x;
      v = v < lo ? lo : v;
      out4.x = v > hi ? hi : v;
    }
    {
      int v = in4.y;
      v = v < lo ? lo : v;
      out4.y = v > hi ? hi : v;
    }
    {
      int v = in4.z;
      v = v < lo ? lo : v;
      out4.z = v > hi ? hi : v;
    }
    {
      int v = in4.w;
      v = v < lo ? lo : v;
      out4.w = v > hi ? hi : v;
    }
    reinterpret_cast<int4*>(out)[gid] = out4;
  }
}
template __global__ void clamp<128>(const int*, int*, int, int, int);
