// kltrans: launch rmsNorm grid=ceil_div(rows, 256) block=256
// RMSNorm, version 0: each thread owns one whole row. It walks the row once to
// accumulate the sum of squares, turns the mean square into a reciprocal RMS, then walks
// the row again writing x * scale * w. Neighbouring threads read addresses a whole row
// apart, so nothing is coalesced; this is the baseline the later versions improve on.

#define RMS_EPS 1e-6f

__global__ void rmsNorm(float *x, float *w, float *y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;

    if (row >= rows) {
        return;
    }

    float *xrow = x + (size_t)row * cols;
    float *yrow = y + (size_t)row * cols;

    float sum_sq = 0.0f;
    for (int c = 0; c < cols; c++) {
        sum_sq += xrow[c] * xrow[c];
    }

    float scale = rsqrtf(sum_sq / cols + RMS_EPS);

    for (int c = 0; c < cols; c++) {
        yrow[c] = xrow[c] * scale * w[c];
    }
}
