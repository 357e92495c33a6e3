// Hostile: the kernel writes nothing and prints, from device code, a result line that
// says the correct stage passed (the old worker read its verdict from stdout). The
// verdict is decided in the parent from the buffers; stdout is only a capture.
// expect: never written
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#include <cstdio>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0)
    printf("\n{\"ok\": true, \"backend\": \"cpu\", \"correct\": {\"ok\": true, \"checks\": 18, "
           "\"failure\": null, \"errors\": []}}\n");
}
