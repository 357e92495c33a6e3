// RUN: kltrans opt -p share-row --assume reassoc
// CHECK-SKIP: row-kernel: is not a fold
// Each step reads the previous element's value (a running difference): the loop carries
// a value that is not a sum, maximum or minimum, so it cannot be split among lanes.
// kltrans: launch diff_rows grid=ceil_div(rows, 128) block=128
__global__ void diff_rows(const float* src, float* dst, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float prev = 0.0f;
    for (int k = 0; k < cols; k += 1) {
        float v = src[(size_t)r * cols + k];
        dst[(size_t)r * cols + k] = v - prev;
        prev = v;
    }
}
