// RUN: kltrans opt -p 'vectorize-split{width=2,braces=false,head=lead,nvec=npairs}'
// A checksum over unsigned words (integer xor: exact in any order) with a named global
// index gid, 8-byte uint2 loads and unbraced head/tail statements.
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
