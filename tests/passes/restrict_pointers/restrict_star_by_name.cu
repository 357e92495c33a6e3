// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// The star written against the name (float *A, float*B): __restrict__ goes between them,
// spaced on both sides, never glued to the name (that would rename the parameter).
__global__ void vadd3(float *A, float*B, float *D, int n)
{
    float *p = D;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = A[i] + B[i];
}
