// kltrans: launch im2col_naive grid=ceil_div(C * K * K * (H + 2 * P - K + 1) * (W + 2 * P - K + 1), 256) block=256
// im2col naive: one C x H x W float32 image, K x K window, stride 1, zero padding P.
// out is (C*K*K) x (Ho*Wo), Ho = H + 2P - K + 1, Wo = W + 2P - K + 1:
//   out[(c*K + ki)*K + kj, oh*Wo + ow] = x[c, oh + ki - P, ow + kj - P] (0 outside).
// One thread per output element, scalar loads and stores.
extern "C" __global__ void im2col_naive(const float* x, float* out, int C, int H, int W, int K,
                                        int P)
{
    int Ho = H + 2 * P - K + 1;
    int Wo = W + 2 * P - K + 1;
    int total = C * K * K * Ho * Wo;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) {
        int col = i % (Ho * Wo);
        int row = i / (Ho * Wo);
        int ow = col % Wo;
        int oh = col / Wo;
        int kj = row % K;
        int ki = (row / K) % K;
        int c = row / (K * K);
        int h = oh + ki - P;
        int w = ow + kj - P;
        float v = 0.0f;
        if (h >= 0 && h < H && w >= 0 && w < W) {
            v = x[((size_t)c * H + h) * W + w];
        }
        out[i] = v;
    }
}
