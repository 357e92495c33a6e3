// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// The star written against the name (float *A, float*B): __restrict__ goes between them,
// spaced on both sides, never glued to the name (that would rename the parameter).
__global__ void vadd3(const float * __restrict__ A, const float* __restrict__ B, float * __restrict__ D, int n)
{
    float * __restrict__ p = D;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = A[i] + B[i];
}
