// RUN: kltrans opt -p 'privatize-atomics{replicas=4}' --assume 'NBINS==256'
// Radix-style bucket counts: a while loop over a named gid, the bucket the top byte of
// a 32-bit unsigned key (`>> 24` keeps it below 256), the number of bins a template
// parameter whose value comes from the context, the update written `counts + b`.
// kltrans: launch bucket_count grid=min(ceil_div(n, 128), 120) block=128
template <int NBINS>
__global__ void bucket_count(const unsigned int* keys, unsigned int* counts, int n)
{
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  while (gid < n) {
    unsigned int b = keys[gid] >> 24;
    atomicAdd(counts + b, 1u);
    gid += blockDim.x * gridDim.x;
  }
}
template __global__ void bucket_count<256>(const unsigned int*, unsigned int*, int);
