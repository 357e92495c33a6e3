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
    bool vec = cols % 4 == 0;
    float r[4];
    if (vec) {
        float4 t = lane * 4 < cols ? reinterpret_cast<const float4*>(xr)[lane]
                                   : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        r[0] = t.x;
        r[1] = t.y;
        r[2] = t.z;
        r[3] = t.w;
    } else {
        for (int k = 0; k < 4; k++)
            r[k] = lane + 32 * k < cols ? xr[lane + 32 * k] : 0.0f;
    }
    for (int k = 0; k < 4; k++)
        r[k] = r[k] * r[k];
    if (vec) {
        if (lane * 4 < cols)
            reinterpret_cast<float4*>(yr)[lane] = make_float4(r[0], r[1], r[2], r[3]);
    } else {
        for (int k = 0; k < 4; k++)
            if (lane + 32 * k < cols)
                yr[lane + 32 * k] = r[k];
    }
}
