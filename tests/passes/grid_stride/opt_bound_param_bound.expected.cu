// RUN: kltrans opt -p 'one-per-thread' --assume 'binds(count,n)'
// ROUNDTRIP: model: grid-stride writes a stride local only as a const (this one is a plain int), so it strides inline
// A grid-stride loop bounded by a parameter called `count` while the launch header names
// the size n: binds(count,n) says count carries n, so the uncapped grid is
// ceil_div(n, 256); the stride local only the loop read goes with it.
// kltrans: launch clamp_all grid=ceil_div(n, 256) block=256
__global__ void clamp_all(const float* x, float* y, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        y[i] = fminf(fmaxf(x[i], -1.0f), 1.0f);
}
