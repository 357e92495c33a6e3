// RUN: kltrans opt -p 'runtime-block-size'
// ROUNDTRIP: model: template-block-size templates the kernel alone; the helper it made read blockDim.x keeps reading it
// A block maximum with its rounds written out behind compile-time tests of BLOCK, the
// warp's rounds in a helper template that takes BLOCK too (each round reads, then writes,
// with __syncwarp between: no lane overwrites a slot another lane still reads): both read
// blockDim.x instead.
// kltrans: launch block_max<float, 128> grid=ceil_div(n, 128) block=128
template <class T, unsigned int BLOCK>
__device__ void warp_max(volatile T* m, unsigned int t)
{
    if (BLOCK >= 64) { T v = fmaxf(m[t], m[t + 32]); __syncwarp(); m[t] = v; __syncwarp(); }
    if (BLOCK >= 32) { T v = fmaxf(m[t], m[t + 16]); __syncwarp(); m[t] = v; __syncwarp(); }
    if (BLOCK >= 16) { T v = fmaxf(m[t], m[t + 8]); __syncwarp(); m[t] = v; __syncwarp(); }
    if (BLOCK >= 8) { T v = fmaxf(m[t], m[t + 4]); __syncwarp(); m[t] = v; __syncwarp(); }
    if (BLOCK >= 4) { T v = fmaxf(m[t], m[t + 2]); __syncwarp(); m[t] = v; __syncwarp(); }
    if (BLOCK >= 2) { T v = fmaxf(m[t], m[t + 1]); __syncwarp(); m[t] = v; __syncwarp(); }
}

template <class T, unsigned int BLOCK>
__global__ void block_max(const T* x, T* out, int n)
{
    __shared__ T m[128];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK + t;
    m[t] = i < n ? x[i] : -INFINITY;
    __syncthreads();
    if (BLOCK >= 256) { if (t < 128) m[t] = fmaxf(m[t], m[t + 128]); __syncthreads(); }
    if (BLOCK >= 128) { if (t < 64) m[t] = fmaxf(m[t], m[t + 64]); __syncthreads(); }
    if (t < 32)
        warp_max<T, BLOCK>(m, t);
    if (t == 0)
        out[blockIdx.x] = m[0];
}
