// RUN: kltrans opt -p 'block-reduce-atomic'
// Collecting flag bits with atomicOr: threads whose element is not NaN/inf-free add the
// bit; the identity of | is 0.
// kltrans: launch any_bad grid=ceil_div(n, 256) block=256
extern "C" __global__ void any_bad(const float* x, unsigned int* flags, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n)
    {
        atomicOr(flags, isfinite(x[idx]) ? 0u : 1u << (idx & 7));
    }
}
