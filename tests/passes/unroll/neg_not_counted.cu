// RUN: kltrans opt -p 'unroll{factor=4}'
// CHECK-SKIP: counted-loop:
// The condition does not bound the induction variable (it reads memory), so this is not
// a counted loop: no rewrite.
__global__ void find_end(const int* flags, int* out) {
  int i = 0;
  for (i = 0; flags[i] != 0; ++i) {
  }
  out[0] = i;
}
