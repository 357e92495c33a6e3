// RUN: kltrans opt -p 'cp-async' --arch 'sm_80'
// CHECK-SKIP: aligned: is 8 bytes but aligned to 4
// A struct of two floats is 8 bytes but only 4-byte aligned: an 8-byte cp.async needs
// 8-byte aligned addresses.
// kltrans: launch cmag grid=ceil_div(n, 128) block=128
struct Cpx {
    float re, im;
};

extern "C" __global__ void cmag(const Cpx* z, float* mag, int n)
{
    __shared__ Cpx zs[128];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) zs[threadIdx.x] = z[i]; else zs[threadIdx.x] = Cpx{0.0f, 0.0f};
    __syncthreads();
    const Cpx v = zs[127 - threadIdx.x];
    if (i < n) mag[i] = v.re * v.re + v.im * v.im;
}
