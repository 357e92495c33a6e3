// RUN: kltrans opt -p scalar-path
// CHECK-SKIP: same-results: the stores of the grid differ
// The float4 path stores lanes y and z swapped: it is not the scalar loop, so keeping
// only the scalar loop would change what the kernel does.
// kltrans: launch copy_rows grid=rows block=64
__global__ void copy_rows(const float* x, float* y, int rows, int cols)
{
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    if (cols % 4 == 0) {
        for (int i = threadIdx.x; i < cols / 4; i += blockDim.x) {
            float4 v = reinterpret_cast<const float4*>(in)[i];
            reinterpret_cast<float4*>(out)[i] = make_float4(v.x, v.z, v.y, v.w);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            out[c] = in[c];
    }
}
