// RUN: kltrans opt -p scalar-path --assume 'no_alias(*)'
// ROUNDTRIP: none: vector-path versions a strided loop; these loops count registers
// A warp per row of at most 128 columns kept in registers. Two ifs on one flag: the
// first loads the row as float4 lanes (lane l holds columns 4l .. 4l + 3) or as scalars
// (lane l holds columns l, l + 32, l + 64, l + 96), the second stores it back in the same
// layout. Each if alone would mix the layouts; the two go together, as one version.
// kltrans: launch square_rows grid=ceil_div(rows, 4) block=128
__global__ void square_rows(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * 4 + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float r[4];
    for (int k = 0; k < 4; k++)
        r[k] = lane + 32 * k < cols ? xr[lane + 32 * k] : 0.0f;
    for (int k = 0; k < 4; k++)
        r[k] = r[k] * r[k];
    for (int k = 0; k < 4; k++)
        if (lane + 32 * k < cols)
            yr[lane + 32 * k] = r[k];
}
