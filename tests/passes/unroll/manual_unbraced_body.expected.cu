// RUN: kltrans opt -p 'unroll{factor=full,style=manual}' --site 2
// The inner loop is the outer loop's unbraced body: its copies are braced, so that all of
// them stay in the outer loop (unbraced, every copy but the first would run once, after it,
// where i is not declared).
// ROUNDTRIP: none: reroll folds the copies back into a loop but keeps the braces
__global__ void zero8x4(float* acc) {
  for (int i = 0; i < 8; ++i)
    {
        acc[4 * i + 0] = 0.0f;
        acc[4 * i + 1] = 0.0f;
        acc[4 * i + 2] = 0.0f;
        acc[4 * i + 3] = 0.0f;
    }
}
