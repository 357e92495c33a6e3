// RUN: kltrans opt -p 'scalarize-split'
// CHECK-SKIP: vector-type: but is read as int2
// The unsigned words are read as int2: the lanes are not the array's elements.
// kltrans: launch checksum grid=min(ceil_div(n, 256), 528) block=128
__global__ void checksum(const unsigned int* words, unsigned int* digest, size_t n)
{
    const unsigned long long gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int h = 0u;
    size_t lead = ((8u - ((size_t)words & 7u)) & 7u) / sizeof(unsigned int);
    if (lead > n) lead = n;
    const size_t npairs = (n - lead) / 2;
    const size_t tail_start = lead + npairs * 2;
    const int2* xv = reinterpret_cast<const int2*>(words + lead);
    for (unsigned long long w = gid; w < npairs; w += blockDim.x * gridDim.x) {
        const int2 v = xv[w];
        h ^= (v.x * 2654435761u) ^ (v.y * 2654435761u);
    }
    if (gid < lead) h ^= words[gid] * 2654435761u;
    if (gid < n - tail_start) h ^= words[tail_start + gid] * 2654435761u;
    atomicXor(digest, h);
}
