// RUN: kltrans opt -p 'one-per-thread'
// GATE: tests/data/workloads/scale
// The capped grid written as launch code often writes it: a round-up division by the
// block's constant and a cap named by a constexpr. The launch model reads the cap and the
// block through the file's constants; the grid goes back to the round-up division, and
// the inverse is grid-stride{max_blocks=GRID_CAP}.
// kltrans: launch scale grid=((n + THREADS - 1) / THREADS) block=THREADS
constexpr int THREADS = 128;
constexpr int GRID_CAP = 4 * 132;

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int k = threadIdx.x + blockIdx.x * blockDim.x;
    if (k < n) {
        y[k] = a * x[k] + b;
    }
}
