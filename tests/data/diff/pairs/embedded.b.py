"""A CuPy kernel as a string (kltrans diff reads the CUDA inside)."""

import cupy as cp

# the Python around it changed too: not a CUDA difference
SCALE_NAME = "scale"

scale = cp.RawKernel(r'''
extern "C" __global__
void scale(float* x, float s, unsigned int n) {
    unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * s + 1.0f;
    }
}
''', SCALE_NAME)
