// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: block-shape: needs a 1-D block
// A 2-D block over an image: threads sharing threadIdx.x would zero and merge the same
// bins twice.
// kltrans: launch image_hist grid=(ceil_div(w, 16), ceil_div(h, 16)) block=(16, 16)
extern "C" __global__ void image_hist(const unsigned char* img, unsigned int* hist, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) atomicAdd(&hist[img[y * w + x]], 1u);
}
