// RUN: kltrans opt -p 'stage-transpose{tile=32}' --assume 'no_alias(*)'
// GATE: corpus/transpose
// ROUNDTRIP: model: the pass writes the staged or direct copy in its own spelling
// A naive transpose the exact form does not read: unsigned indices written inline with
// the thread id first, a constant block size, and an early return for the edges. The
// kernel model reads it as out[c * rows + r] = in[r * cols + c]; the staged kernel is
// written in the pass's own spelling and run against this one over whole grids.
#define SIDE 16
// kltrans: launch transpose_naive grid=(ceil_div(cols, SIDE), ceil_div(rows, SIDE)) block=(SIDE, SIDE)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    const unsigned c = threadIdx.x + SIDE * blockIdx.x;
    const unsigned r = threadIdx.y + SIDE * blockIdx.y;
    if (r >= rows || c >= cols)
        return;
    out[c * rows + r] = in[r * cols + c];
}
