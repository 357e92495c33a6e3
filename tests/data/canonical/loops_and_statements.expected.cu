// Statement spellings: braces, declarations, increments, compound assignments.
// kltrans: launch scale_rows grid=rows block=128

__global__ void scale_rows(const float* __restrict__ in, float* out, int rows, int cols) {
  int r = blockIdx.x;
  int t = threadIdx.x;
  float total = 0.f;
  for (int c = t; c < cols; c += blockDim.x) {
    total += in[r * cols + c];
  }
  int hits = 0;
  int *unused_ptr = nullptr;
  unsigned steps = 0;
  for (int c = t; c < cols; c++) {
    if (in[r * cols + c] > 0.f) {
      hits++;
    }
    else {
      hits--;
    }
    steps++;
  }
  int k = 0;
  while (k < 4) {
    k++;
  }
  do {
    k--;
  }
  while (k > 0);
  float scale = total;
  scale *= 0.5f;
  scale *= 2.0f;
  // ok: the value of the increment is used
  out[r * cols + (t++ % cols)] = scale + hits + steps + (unused_ptr != nullptr);
  // ok: the left side is not a plain variable
  out[r] = out[r] + 1.0f;
  // ok: else if stays else if (it is not braced into else { if ... })
  if (t > 3) { k = 1; } else if (t > 2) { k = 2; }
  // ok: a for initializer's two declarators stay in the for
  for (int a = 0, b = 1; a < b; a += 2) { k += a; }
}
