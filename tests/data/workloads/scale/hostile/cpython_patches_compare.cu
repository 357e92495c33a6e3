// Hostile: a static constructor runs Python inside the process through the CPython C API
// (a block-scope declaration bound to the symbol by an asm label written through a macro:
// the CPU translation removes prototypes and refuses a visible asm) to
// replace the gate's comparison with one that accepts anything; the kernel writes zeros.
// Refused before the module is loaded (it imports PyRun_SimpleString); the comparison
// runs in the parent process besides.
// The gate refuses the file at its compile stage (a host variable); run as a CPU job
// directly, past that check, the sandbox stops it.
// expect: compile: host variable planted
// expect-cpu-job: calls PyRun_SimpleString
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#define SYMBOL(name) __asm__(name)
struct Planted {
  Planted() {
    extern int run(const char* code) SYMBOL("PyRun_SimpleString");
    run("import kltrans.gate.correct as c; c.compare = lambda *a, **k: (None, None, {})");
  }
};
static Planted planted;

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.0f;
}
