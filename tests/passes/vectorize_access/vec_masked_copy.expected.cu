// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// A masked copy writes out[i] only where the mask is set: out's vector is loaded first,
// so the lanes the mask skips are written back unchanged.
// kltrans: launch masked_copy grid=ceil_div(ceil_div(n, 4), 256) block=256
__global__ void masked_copy(const int* mask, const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    const int4 mask4 = reinterpret_cast<const int4*>(mask)[i];
    float4 out4 = reinterpret_cast<const float4*>(out)[i];
    const float4 in4 = reinterpret_cast<const float4*>(in)[i];
    {
      if (mask4.x != 0) out4.x = in4.x;
    }
    {
      if (mask4.y != 0) out4.y = in4.y;
    }
    {
      if (mask4.z != 0) out4.z = in4.z;
    }
    {
      if (mask4.w != 0) out4.w = in4.w;
    }
    reinterpret_cast<float4*>(out)[i] = out4;
  } else {
    for (int k = 4 * i; k < n; ++k) {
      if (mask[k] != 0) out[k] = in[k];
    }
  }
}
