// RUN: kltrans opt -p 'one-per-thread'
// A grid sized for 256 elements per thread (grid-stride{work=256}) with the block given
// by a macro: the grid goes back to one thread per element, ceil_div(n, BLOCK), never
// ceil_div(n, 65536) (three quarters of the output would be left unwritten).
// kltrans: launch scale grid=ceil_div(n, BLOCK) block=BLOCK
#define BLOCK 256
__global__ void scale(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 3.0f * x[i];
    }
}
