// kltrans: launch stencil2d_5pt_naive grid=(ceil_div(cols, 16), ceil_div(rows, 16)) block=(16, 16)
// stencil2d_5pt naive: y[i, j] = cc * x[i, j] + cn * (x[i-1, j] + x[i+1, j] + x[i, j-1]
// + x[i, j+1]) on a rows x cols float32 grid (row-major), zero boundary (neighbours
// outside the grid read as 0). One thread per output cell, 2D grid (x: column, y: row).
extern "C" __global__ void stencil2d_5pt_naive(const float* x, float* y, float cc, float cn,
                                               int rows, int cols)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < rows && j < cols) {
        size_t at = (size_t)i * cols + j;
        float up = i > 0 ? x[at - cols] : 0.0f;
        float down = i + 1 < rows ? x[at + cols] : 0.0f;
        float left = j > 0 ? x[at - 1] : 0.0f;
        float right = j + 1 < cols ? x[at + 1] : 0.0f;
        y[at] = cc * x[at] + cn * (up + down + left + right);
    }
}
