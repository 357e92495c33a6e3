// kltrans: launch batched_transpose_naive grid=(ceil_div(R, 16), ceil_div(C, 16), B) block=(16, 16)
// batched_transpose naive: y[b, c, r] = x[b, r, c]; x is B x R x C float32 (row-major),
// y is B x C x R. One thread per output element, 3D grid: x indexes the output column
// (= input row r), y the output row (= input column c), z the batch.
extern "C" __global__ void batched_transpose_naive(const float* x, float* y, int B, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (b < B && r < R && c < C) {
        size_t base = (size_t)b * R * C;
        y[base + (size_t)c * R + r] = x[base + (size_t)r * C + c];
    }
}
