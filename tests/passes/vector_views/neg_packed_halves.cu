// RUN: kltrans opt -p 'scalarize-vectors'
// CHECK-SKIP: vector-type: its components are not elements
// A uint4 view of bytes packs sixteen values: its components are not elements of the array.
__global__ void count(const unsigned char* bytes, unsigned* out, int n16) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n16) {
    uint4 p = reinterpret_cast<const uint4*>(bytes)[t];
    out[t] = __popc(p.x) + __popc(p.y) + __popc(p.z) + __popc(p.w);
  }
}
