// RUN: kltrans opt -p unstage-shared
// ROUNDTRIP: none: stage-shared stages a stretch a loop reads, not a tile with a halo
// A 1-D three-point stencil whose tile has a halo: every thread stores its element one
// slot in, and thread 0 also the element left of the block. Each read becomes the
// store of the thread that wrote its slot: its own, the left neighbour's, or thread 0's
// halo for the first thread.
// kltrans: launch blur3 grid=ceil_div(n, 128) block=128
__global__ void blur3(const float* in, float* out, int n)
{
    __shared__ float s[130];
    int i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x + 1] = i < n ? in[i] : 0.0f;
    if (threadIdx.x == 0)
        s[0] = i > 0 ? in[i - 1] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = s[threadIdx.x] + s[threadIdx.x + 1];
}
