// RUN: kltrans opt -p 'specialize-interior{flag=inside,extent=TILE}'
// A 2-D tiled kernel with macros: the column index is a kernel-level declaration
// (blockIdx.x * TILE + threadIdx.x), the row a temporary of the loop. The condition is
// spelled with the TILE macro (extent=TILE).
#define TILE 32
#define ROWS 8
// kltrans: launch add_rows grid=(ceil_div(cols, TILE), ceil_div(rows, TILE)) block=(TILE, ROWS)
__global__ void add_rows(const float* m, const float* bias, float* out, int rows, int cols)
{
    int col = blockIdx.x * TILE + threadIdx.x;
    int row0 = blockIdx.y * TILE;
    const bool inside = row0 + TILE <= rows && blockIdx.x * TILE + TILE <= cols;

    if (inside) {
        for (int k = 0; k < TILE; k += ROWS) {
            int row = row0 + threadIdx.y + k;
            out[row * cols + col] = m[row * cols + col] + bias[row];
        }
    } else {
        for (int k = 0; k < TILE; k += ROWS) {
            int row = row0 + threadIdx.y + k;
            if (row < rows && col < cols) out[row * cols + col] = m[row * cols + col] + bias[row];
        }
    }
}
