// RUN: kltrans opt -p 'scalarize-split{braces=true}'
// The uint2 split vectorize-split{width=2,braces=false} writes for an xor checksum (head
// and tail unbraced, names lead and npairs): back to one scalar loop.
// kltrans: launch checksum grid=min(ceil_div(n, 256), 528) block=128
__global__ void checksum(const unsigned int* words, unsigned int* digest, size_t n)
{
    const unsigned long long gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int h = 0u;
    for (unsigned long long w = gid; w < n; w += blockDim.x * gridDim.x) {
        h ^= words[w] * 2654435761u;
    }
    atomicXor(digest, h);
}
