// RUN: kltrans opt -p 'add-launch-bounds{max_threads=256}'
// CHECK-SKIP: block-size-known: threads has no known value
// The launcher takes the block size from its caller: a larger block than the bound would
// fail at run time, so no bound is promised.
__global__ void add_one(int* data, int n) {
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid < n) data[gid] += 1;
}

void launch_add_one(int* data, int n, int threads) {
  add_one<<<(n + threads - 1) / threads, threads>>>(data, n);
}
