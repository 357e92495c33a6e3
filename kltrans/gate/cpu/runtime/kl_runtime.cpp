// kl_runtime.cpp - scheduler, fibers and grid runner of kltrans' CPU emulator.
//
// Built once (per content hash) into libklrt.so, which emulator.py loads RTLD_GLOBAL
// before any kernel module; kernel modules call the kl_rt_* entry points below.
//
// Execution model
//   * A launch runs gridDim blocks on `threads` OS threads (std::thread workers). Blocks
//     are taken from a seeded random permutation of the grid; all fibers of one block
//     run on one worker, one at a time, switching only at barriers.
//   * Every CUDA thread is a fiber: a 128 KiB stack slot aligned to its size (a guard
//     page at the bottom, the Fiber record near the top, offset by (slot % 256) cache
//     lines so the records of a block do not share cache sets; at least 108 KiB of stack).
//     The switch is kl_ctx_switch (kl_switch_x86_64.S): six pushes, a stack-pointer swap,
//     six pops - no syscall. Other architectures (or -DKL_FORCE_UCONTEXT) use
//     swapcontext. Stacks are mmap'd once per worker and reused (a small process-wide
//     pool keeps them across launches).
//   * At every barrier the next fiber is drawn uniformly at random from the ready set
//     (splitmix64 seeded by (seed, block)), so code between two barriers runs in a random
//     interleaving of whole thread segments; a missing barrier shows as an order-dependent
//     result.
//   * Barriers: __syncthreads needs every thread of the block at the same call site
//     (line); warp collectives need every existing lane named by the mask at the same
//     site (__syncwarp: same mask, any site). The last arrival completes the collective
//     for everybody and makes them ready.
//   * Deadlock / divergence: a thread that exits while others wait at a barrier, a
//     barrier reached while some threads have exited, threads at two different
//     __syncthreads sites, a mask naming an exited lane, or a ready set that runs empty
//     while fibers wait (diagnosed: the oldest warp collective with missing lanes is a
//     divergent-warp error, else the block barrier is a deadlock).
//   * Timeout: the calling thread is a watchdog. Past timeout_s it raises the abort flag
//     (seen at every barrier) and signals the workers (SIGRTMIN+7) every few ms; a worker
//     whose fiber is running kernel code siglongjmps back to its scheduler. Faults
//     (SIGSEGV/SIGBUS/SIGFPE/SIGILL) in kernel code are caught the same way (on an
//     alternate signal stack, so a fiber stack overflow is reported too) and become a
//     "crash" error. Either way the interrupted block is abandoned; if kernel code was
//     inside a libc call holding a lock, the process may be unusable afterwards, so the
//     caller should run launches in a disposable worker process.

#include "kl_cuda_runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if !defined(__x86_64__) || defined(KL_FORCE_UCONTEXT)
#define KL_UCONTEXT 1
#endif

#define KL_EXPORT extern "C" __attribute__((visibility("default")))

using namespace kl::detail;

extern "C" {
void kl_ctx_switch(void** save_sp, void* new_sp);
void kl_ctx_trampoline();
}

namespace klrt {

enum { ST_READY = 0, ST_RUNNING, ST_WAIT_BLOCK, ST_WAIT_WARP, ST_WAIT_ACTIVE, ST_DONE };
const unsigned char POISON = 0xff;  // fresh shared memory: NaN as float/half/bf16, -1 as int
const size_t PAGE = 4096;
const size_t STATIC_SHARED_CAP = 1u << 20;
const int MAX_SLOTS = 256;

struct Group {
    bool used;
    int kind;
    unsigned mask;
    CollectiveFn fn;
    int line;
    const char* file;
    const char* what;
    unsigned arrived;
    unsigned long long seq;
};

struct WarpState {
    Fiber* lanes[32];
    Group groups[32];
    unsigned exists;
    unsigned done;
    unsigned active_wait;
};

struct Launch;
struct Worker;

}  // namespace klrt

namespace kl {
namespace detail {
using namespace ::klrt;
struct Block {
    Launch* launch;
    Worker* worker;
    void (*fn)(void*);
    void* args;
    unsigned long long index;
    int n, ndone, nwarps;
    Fiber* fibers[1024];
    Fiber* ready[1024];
    int nready;
    // block barrier
    int bar_arrived, bar_line, bar_kind, bar_count, bar_result;
    const char* bar_what;
    const char* bar_file;
    Fiber* bar_first;
    WarpState warps[32];
    unsigned long long seq;
    uint64_t rng;
    // scheduler context
    void* sched_sp;
#ifdef KL_UCONTEXT
    ucontext_t sched_uc;
#endif
    // shared memory
    char* shared_base;
    size_t shared_cap, shared_used;
    struct { const void* key; void* ptr; } slots[MAX_SLOTS];
    int nslots;
    char* dyn;
    size_t dyn_size;
    // outcome
    int err_code, err_line;
    const char* err_file;
    char err_msg[1024];
    unsigned long long switches, barriers, warp_ops;
};
}  // namespace detail
}  // namespace kl

namespace klrt {

struct StackArena {
    char* map;
    size_t map_len;
    char* base;
    unsigned nslots;
};

struct Launch {
    LaunchCfg cfg;
    void (*fn)(void*);
    void** args;
    unsigned nthreads;
    unsigned long long nblocks;
    std::vector<uint32_t> perm;
    std::atomic<unsigned long long> next{0};
    std::atomic<int> abort{0};
    std::mutex mu;
    std::condition_variable cv;
    int finished = 0;
    // the first error
    int err_code = 0, err_line = 0;
    char err_file[512] = {0};
    char err_msg[1024] = {0};
    unsigned long long pc_offset = 0;
    char module[512] = {0};
    std::atomic<unsigned long long> blocks{0}, fibers{0}, switches{0}, barriers{0}, warp_ops{0};
};

struct Worker {
    Launch* L;
    int id;
    sigjmp_buf jb;
    volatile sig_atomic_t in_fiber;
    volatile int sig_code;
    volatile int sig_no;
    void* volatile sig_addr;
    void* volatile sig_pc;
    void* volatile sig_sp;
    Block* block;
    StackArena* stacks;
    char* shared_map;
    size_t shared_map_len;
    void* altstack;
};

thread_local Worker* t_worker = nullptr;

// ------------------------------------------------------------------------ helpers
inline uint64_t splitmix(uint64_t& s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline Fiber* fiber_in_slot(char* slot) { return fiber_of(reinterpret_cast<uintptr_t>(slot)); }

void fmt_dim(char* buf, size_t n, unsigned x, unsigned y, unsigned z) {
    snprintf(buf, n, "(%u,%u,%u)", x, y, z);
}

struct Names {
    char block[48], thread[48];
};
Names names_of(const Fiber* f) {
    Names nm;
    fmt_dim(nm.block, sizeof nm.block, f->bid.x, f->bid.y, f->bid.z);
    fmt_dim(nm.thread, sizeof nm.thread, f->tid.x, f->tid.y, f->tid.z);
    return nm;
}

// ------------------------------------------------------------------- context switch
#ifdef KL_UCONTEXT
inline ucontext_t* uc_of(Fiber* f) { return static_cast<ucontext_t*>(f->uctx); }
void uc_entry(unsigned lo, unsigned hi) {
    Fiber* f = reinterpret_cast<Fiber*>(((uintptr_t)hi << 32) | lo);
    void (*entry)(Fiber*) = reinterpret_cast<void (*)(Fiber*)>(f->sp);
    entry(f);
}
#endif

void ctx_init(Fiber* f, void (*entry)(Fiber*)) {
    char* slot = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(f) & ~(KL_SLOT - 1));
#ifdef KL_UCONTEXT
    char* ucp = reinterpret_cast<char*>(f) - ((sizeof(ucontext_t) + 63) & ~(size_t)63);
    ucontext_t* uc = reinterpret_cast<ucontext_t*>(ucp);
    f->uctx = uc;
    getcontext(uc);
    uc->uc_stack.ss_sp = slot + PAGE;
    uc->uc_stack.ss_size = (size_t)(ucp - 64 - (slot + PAGE));
    uc->uc_link = nullptr;
    f->sp = reinterpret_cast<void*>(entry);
    makecontext(uc, reinterpret_cast<void (*)()>(uc_entry), 2,
                (unsigned)(uintptr_t)f, (unsigned)((uintptr_t)f >> 32));
#else
    (void)slot;
    uintptr_t top = (reinterpret_cast<uintptr_t>(f) - 64) & ~(uintptr_t)15;
    void** sp = reinterpret_cast<void**>(top - 72);
    sp[0] = nullptr;                                   // r15
    sp[1] = nullptr;                                   // r14
    sp[2] = reinterpret_cast<void*>(entry);            // r13: entry
    sp[3] = f;                                         // r12: argument
    sp[4] = nullptr;                                   // rbx
    sp[5] = nullptr;                                   // rbp
    sp[6] = reinterpret_cast<void*>(&kl_ctx_trampoline);  // return address
    sp[7] = nullptr;
    sp[8] = nullptr;
    f->sp = sp;
#endif
}

inline void ctx_switch(Fiber* from, Fiber* to) {
#ifdef KL_UCONTEXT
    swapcontext(uc_of(from), uc_of(to));
#else
    kl_ctx_switch(&from->sp, to->sp);
#endif
}
inline void ctx_to_sched(Block* b, Fiber* from) {
#ifdef KL_UCONTEXT
    swapcontext(uc_of(from), &b->sched_uc);
#else
    kl_ctx_switch(&from->sp, b->sched_sp);
#endif
}
inline void ctx_from_sched(Block* b, Fiber* to) {
#ifdef KL_UCONTEXT
    swapcontext(&b->sched_uc, uc_of(to));
#else
    kl_ctx_switch(&b->sched_sp, to->sp);
#endif
}

// ------------------------------------------------------------------------- ready set
inline Fiber* pop_ready(Block* b) {
    int n = b->nready;
    if (n == 0) return nullptr;
    uint32_t i = (uint32_t)(((splitmix(b->rng) >> 32) * (uint64_t)n) >> 32);
    Fiber* f = b->ready[i];
    b->ready[i] = b->ready[n - 1];
    b->nready = n - 1;
    return f;
}
inline void push_ready(Block* b, Fiber* f) {
    f->state = ST_READY;
    b->ready[b->nready++] = f;
}

// ---------------------------------------------------------------------------- errors
__attribute__((noreturn, format(printf, 6, 7)))
void fail(Block* b, Fiber* from, int code, int line, const char* file, const char* fmt, ...) {
    if (b->err_code == KL_OK) {
        b->err_code = code;
        b->err_line = line;
        b->err_file = file;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->err_msg, sizeof b->err_msg, fmt, ap);
        va_end(ap);
    }
    ctx_to_sched(b, from);
    __builtin_trap();  // never resumed
}

const char* state_text(Fiber* f, char* buf, size_t n) {
    switch (f->state) {
        case ST_DONE: snprintf(buf, n, "exited"); break;
        case ST_WAIT_BLOCK: snprintf(buf, n, "waits at %s (line %d)", f->wait_what, f->wait_line); break;
        case ST_WAIT_WARP: snprintf(buf, n, "waits at %s (line %d)", f->wait_what, f->wait_line); break;
        case ST_WAIT_ACTIVE: snprintf(buf, n, "waits at __activemask (line %d)", f->wait_line); break;
        case ST_READY: snprintf(buf, n, "is ready"); break;
        default: snprintf(buf, n, "is running"); break;
    }
    return buf;
}

void release_active(Block* b, WarpState& w) {
    unsigned waiting = w.active_wait;
    w.active_wait = 0;
    for (unsigned l = 0; l < 32; ++l) {
        if (!(waiting >> l & 1u)) continue;
        unsigned m = 0;
        for (unsigned k = 0; k < 32; ++k)
            if ((waiting >> k & 1u) && w.lanes[k]->wait_line == w.lanes[l]->wait_line) m |= 1u << k;
        w.lanes[l]->a2 = m;
        push_ready(b, w.lanes[l]);
    }
}

// Nothing is ready but some fibers wait: release __activemask convergence points, or
// diagnose the block (never returns then).
Fiber* resolve_stuck(Block* b, Fiber* self) {
    bool released = false;
    for (int wi = 0; wi < b->nwarps; ++wi) {
        if (b->warps[wi].active_wait) {
            release_active(b, b->warps[wi]);
            released = true;
        }
    }
    if (released) return pop_ready(b);
    char st[160];
    const Group* best = nullptr;
    int best_w = 0;
    for (int wi = 0; wi < b->nwarps; ++wi)
        for (const Group& g : b->warps[wi].groups)
            if (g.used && (!best || g.seq < best->seq)) { best = &g; best_w = wi; }
    if (best) {
        WarpState& w = b->warps[best_w];
        unsigned missing = best->mask & ~best->arrived;
        int l = __builtin_ctz(missing);
        Fiber* m = w.lanes[l];
        Names nm = names_of(m);
        fail(b, self, KL_DIVERGENT, best->line, best->file,
             "%s at line %d: block %s, warp %d: the mask 0x%08x names lanes 0x%08x that never "
             "arrive; lane %d (thread %s) %s", best->what, best->line, nm.block, best_w,
             best->mask, missing, l, nm.thread, state_text(m, st, sizeof st));
    }
    if (b->bar_arrived > 0) {
        Fiber* other = nullptr;
        for (int i = 0; i < b->n; ++i)
            if (b->fibers[i]->state != ST_WAIT_BLOCK) { other = b->fibers[i]; break; }
        Names nm = names_of(b->bar_first);
        Names on = names_of(other ? other : b->bar_first);
        fail(b, self, KL_DEADLOCK, b->bar_line, b->bar_file,
             "%s at line %d: %d of %d threads of block %s wait here; thread %s %s",
             b->bar_what, b->bar_line, b->bar_arrived, b->n, nm.block, on.thread,
             other ? state_text(other, st, sizeof st) : "?");
    }
    Names nm = names_of(self);
    fail(b, self, KL_DEADLOCK, 0, nullptr, "block %s cannot make progress", nm.block);
}

void check_abort(Block* b, Fiber* self, int line) {
    int a = b->launch->abort.load(std::memory_order_relaxed);
    if (a == KL_TIMEOUT) {
        Names nm = names_of(self);
        fail(b, self, KL_TIMEOUT, line, self->wait_file,
             "the launch did not finish within %.3g s (thread %s of block %s was at %s, line %d)",
             b->launch->cfg.timeout_s, nm.thread, nm.block, self->wait_what, line);
    }
    if (a) fail(b, self, -1, line, nullptr, "launch aborted");
}

void suspend(Block* b, Fiber* self) {
    check_abort(b, self, self->wait_line);
    Fiber* next = pop_ready(b);
    if (!next) next = resolve_stuck(b, self);
    if (next == self) {
        self->state = ST_RUNNING;
        return;
    }
    next->state = ST_RUNNING;
    ++b->switches;
    ctx_switch(self, next);
}

// ---------------------------------------------------------------------- fiber main
void fiber_main(Fiber* f) {
    Block* b = f->block;
    b->fn(b->args);
    f->state = ST_DONE;
    ++b->ndone;
    WarpState& w = b->warps[f->warp];
    unsigned bit = 1u << f->lane;
    w.done |= bit;
    for (const Group& g : w.groups) {
        if (g.used && (g.mask & bit) && !(g.arrived & bit)) {
            Names nm = names_of(f);
            fail(b, f, KL_DIVERGENT, g.line, g.file,
                 "%s at line %d: block %s, warp %u: lane %u (thread %s) exited without reaching "
                 "it (mask 0x%08x, arrived 0x%08x)", g.what, g.line, nm.block, f->warp, f->lane,
                 nm.thread, g.mask, g.arrived);
        }
    }
    if (b->bar_arrived > 0) {
        Names nm = names_of(f);
        fail(b, f, KL_DEADLOCK, b->bar_line, b->bar_file,
             "%s at line %d: thread %s of block %s exited while %d thread(s) wait at the barrier",
             b->bar_what, b->bar_line, nm.thread, nm.block, b->bar_arrived);
    }
    if (w.active_wait) {
        unsigned live = w.exists & ~w.done;
        if ((w.active_wait & live) == live) release_active(b, w);
    }
    Fiber* next = pop_ready(b);
    if (!next) {
        if (b->ndone == b->n) {
            ctx_to_sched(b, f);
            __builtin_trap();
        }
        next = resolve_stuck(b, f);
    }
    next->state = ST_RUNNING;
    ++b->switches;
    ctx_switch(f, next);
    __builtin_trap();  // a finished fiber is never resumed
}

// ------------------------------------------------------------------------ signals
std::mutex g_sig_mu;
int g_sig_refs = 0;
const int FAULT_SIGNALS[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction g_old[4];
struct sigaction g_old_timeout;
int timeout_signal() { return SIGRTMIN + 7; }

void on_signal(int sig, siginfo_t* si, void* ucv) {
    Worker* w = t_worker;
    ucontext_t* uc = static_cast<ucontext_t*>(ucv);
    void* pc = nullptr;
    void* sp = nullptr;
#if defined(__x86_64__)
    pc = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
    sp = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
    pc = reinterpret_cast<void*>(uc->uc_mcontext.pc);
    sp = reinterpret_cast<void*>(uc->uc_mcontext.sp);
#endif
    if (sig == timeout_signal()) {
        if (w && w->in_fiber && w->L->abort.load()) {
            w->sig_code = w->L->abort.load();
            w->sig_no = sig;
            w->sig_pc = pc;
            w->sig_sp = sp;
            w->sig_addr = nullptr;
            siglongjmp(w->jb, 1);
        }
        return;
    }
    if (w && w->in_fiber) {
        w->sig_code = KL_CRASH;
        w->sig_no = sig;
        w->sig_addr = si ? si->si_addr : nullptr;
        w->sig_pc = pc;
        w->sig_sp = sp;
        siglongjmp(w->jb, 2);
    }
    // not kernel code: give the signal back to whoever handled it before us
    for (int i = 0; i < 4; ++i) {
        if (FAULT_SIGNALS[i] == sig) {
            sigaction(sig, &g_old[i], nullptr);
            if (si && si->si_code <= 0) raise(sig);  // sent by kill(): re-deliver
            return;                                  // a fault re-executes and re-faults
        }
    }
}

void install_handlers() {
    std::lock_guard<std::mutex> lk(g_sig_mu);
    if (g_sig_refs++ > 0) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; ++i) sigaction(FAULT_SIGNALS[i], &sa, &g_old[i]);
    sigaction(timeout_signal(), &sa, &g_old_timeout);
}

void uninstall_handlers() {
    std::lock_guard<std::mutex> lk(g_sig_mu);
    if (--g_sig_refs > 0) return;
    for (int i = 0; i < 4; ++i) sigaction(FAULT_SIGNALS[i], &g_old[i], nullptr);
    sigaction(timeout_signal(), &g_old_timeout, nullptr);
}

// -------------------------------------------------------------------- stack arenas
std::mutex g_pool_mu;
std::vector<StackArena*> g_pool;

StackArena* acquire_stacks(unsigned n) {
    {
        std::lock_guard<std::mutex> lk(g_pool_mu);
        StackArena* best = nullptr;
        size_t bi = 0;
        for (size_t i = 0; i < g_pool.size(); ++i)
            if (g_pool[i]->nslots >= n && (!best || g_pool[i]->nslots < best->nslots)) {
                best = g_pool[i];
                bi = i;
            }
        if (best) {
            g_pool.erase(g_pool.begin() + (long)bi);
            return best;
        }
    }
    StackArena* a = new StackArena;
    a->nslots = n;
    a->map_len = ((size_t)n + 1) * KL_SLOT;
    void* m = mmap(nullptr, a->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        delete a;
        return nullptr;
    }
    a->map = static_cast<char*>(m);
    a->base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(m) + KL_SLOT - 1) & ~(KL_SLOT - 1));
    for (unsigned i = 0; i < n; ++i) mprotect(a->base + (size_t)i * KL_SLOT, PAGE, PROT_NONE);
    return a;
}

void release_stacks(StackArena* a) {
    if (!a) return;
    std::lock_guard<std::mutex> lk(g_pool_mu);
    if (g_pool.size() < 8) {
        g_pool.push_back(a);
        return;
    }
    munmap(a->map, a->map_len);
    delete a;
}

// --------------------------------------------------------------------- the grid
void record_error(Launch* L, int code, int line, const char* file, const char* msg,
                  unsigned long long pc_off, const char* module) {
    std::lock_guard<std::mutex> lk(L->mu);
    if (L->err_code != KL_OK) return;
    L->err_code = code;
    L->err_line = line;
    snprintf(L->err_file, sizeof L->err_file, "%s", file ? file : "");
    snprintf(L->err_msg, sizeof L->err_msg, "%s", msg);
    L->pc_offset = pc_off;
    snprintf(L->module, sizeof L->module, "%s", module ? module : "");
}

int run_block(Worker* W, unsigned long long index) {
    Launch* L = W->L;
    Block* b = W->block;
    const LaunchCfg& c = L->cfg;
    unsigned gx = c.grid[0], gy = c.grid[1];
    uint3 bid = {(unsigned)(index % gx), (unsigned)((index / gx) % gy), (unsigned)(index / ((unsigned long long)gx * gy))};
    dim3 bdim(c.block[0], c.block[1], c.block[2]);
    dim3 gdim(c.grid[0], c.grid[1], c.grid[2]);
    int n = (int)L->nthreads;
    b->index = index;
    b->n = n;
    b->ndone = 0;
    b->nwarps = (n + 31) / 32;
    b->nready = 0;
    b->bar_arrived = 0;
    b->seq = 0;
    b->err_code = KL_OK;
    b->err_line = 0;
    b->err_file = nullptr;
    b->err_msg[0] = 0;
    b->nslots = 0;
    b->shared_used = 0;
    uint64_t s = c.seed * 0x9e3779b97f4a7c15ull ^ (index + 0x632be59bd9b4e019ull);
    splitmix(s);
    b->rng = s;
    for (int wi = 0; wi < b->nwarps; ++wi) {
        WarpState& w = b->warps[wi];
        memset(&w, 0, sizeof w);
    }
    for (int i = 0; i < n; ++i) {
        Fiber* f = fiber_in_slot(W->stacks->base + (size_t)i * KL_SLOT);
        unsigned u = (unsigned)i;
        f->tid = uint3{u % bdim.x, (u / bdim.x) % bdim.y, u / (bdim.x * bdim.y)};
        f->bid = bid;
        f->bdim = bdim;
        f->gdim = gdim;
        f->linear = u;
        f->lane = u & 31u;
        f->warp = u >> 5;
        f->nthreads = (unsigned)n;
        f->block = b;
        f->wait_line = 0;
        f->wait_what = "";
        f->wait_file = nullptr;
        ctx_init(f, fiber_main);
        b->fibers[i] = f;
        b->warps[f->warp].lanes[f->lane] = f;
        b->warps[f->warp].exists |= 1u << f->lane;
        push_ready(b, f);
    }
    if (b->dyn_size) memset(b->dyn, POISON, b->dyn_size);
    Fiber* first = pop_ready(b);
    first->state = ST_RUNNING;
    W->in_fiber = 1;
    ctx_from_sched(b, first);
    W->in_fiber = 0;
    L->switches.fetch_add(b->switches, std::memory_order_relaxed);
    L->barriers.fetch_add(b->barriers, std::memory_order_relaxed);
    L->warp_ops.fetch_add(b->warp_ops, std::memory_order_relaxed);
    b->switches = b->barriers = b->warp_ops = 0;
    if (b->err_code == KL_OK) {
        L->blocks.fetch_add(1, std::memory_order_relaxed);
        L->fibers.fetch_add((unsigned long long)n, std::memory_order_relaxed);
    }
    return b->err_code;
}

void describe_signal(Worker* W, char* buf, size_t n, unsigned long long* pc_off, char* module,
                     size_t mlen) {
    module[0] = 0;
    *pc_off = 0;
    Dl_info info;
    if (W->sig_pc && dladdr(W->sig_pc, &info) && info.dli_fname) {
        snprintf(module, mlen, "%s", info.dli_fname);
        *pc_off = (unsigned long long)((char*)W->sig_pc - (char*)info.dli_fbase);
    }
    Fiber* f = nullptr;
    char* sp = static_cast<char*>(W->sig_sp);
    char* base = W->stacks ? W->stacks->base : nullptr;
    if (sp && base && sp >= base && sp < base + (size_t)W->stacks->nslots * KL_SLOT)
        f = fiber_of(reinterpret_cast<uintptr_t>(sp));
    char who[128] = "";
    if (f) {
        Names nm = names_of(f);
        snprintf(who, sizeof who, "thread %s of block %s", nm.thread, nm.block);
    }
    if (W->sig_code == KL_TIMEOUT) {
        snprintf(buf, n, "the launch did not finish within %.3g s%s%s", W->L->cfg.timeout_s,
                 who[0] ? "; " : "", who[0] ? who : "");
        if (who[0]) snprintf(buf + strlen(buf), n - strlen(buf), " was running");
        return;
    }
    const char* sname = W->sig_no == SIGSEGV ? "SIGSEGV" : W->sig_no == SIGBUS ? "SIGBUS"
                      : W->sig_no == SIGFPE ? "SIGFPE" : W->sig_no == SIGILL ? "SIGILL" : "signal";
    char* addr = static_cast<char*>(W->sig_addr);
    bool guard = false;
    if (addr && base && addr >= base && addr < base + (size_t)W->stacks->nslots * KL_SLOT) {
        size_t off = (size_t)(addr - base) % KL_SLOT;
        guard = off < PAGE;
    }
    if (guard) {
        snprintf(buf, n, "%s: fiber stack overflow (%zu KiB per CUDA thread)%s%s", sname,
                 (size_t)(KL_SLOT - PAGE - sizeof(Fiber) - 64 * KL_COLORS) / 1024,
                 who[0] ? " in " : "", who);
    } else if (W->sig_no == SIGFPE) {
        snprintf(buf, n, "%s: arithmetic exception (integer division by zero?)%s%s", sname,
                 who[0] ? " in " : "", who);
    } else {
        snprintf(buf, n, "%s: invalid memory access at %p%s%s", sname, (void*)addr,
                 who[0] ? " in " : "", who);
    }
}

void worker_main(Launch* L, int id) {
    Worker* W = new Worker();
    W->L = L;
    W->id = id;
    W->in_fiber = 0;
    t_worker = W;
    W->altstack = malloc(1 << 16);
    stack_t ss;
    ss.ss_sp = W->altstack;
    ss.ss_size = 1 << 16;
    ss.ss_flags = 0;
    stack_t old_ss;
    sigaltstack(&ss, &old_ss);
    W->block = static_cast<Block*>(calloc(1, sizeof(Block)));
    W->block->launch = L;
    W->block->worker = W;
    W->block->fn = L->fn;
    W->block->args = L->args;
    W->stacks = acquire_stacks(L->nthreads);
    size_t dyn = (size_t)L->cfg.smem;
    W->shared_map_len = STATIC_SHARED_CAP + ((dyn + 2 * PAGE) & ~(PAGE - 1));
    void* sm = mmap(nullptr, W->shared_map_len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    W->shared_map = sm == MAP_FAILED ? nullptr : static_cast<char*>(sm);
    if (!W->stacks || !W->shared_map) {
        record_error(L, KL_CRASH, 0, nullptr, "out of memory for fiber stacks / shared memory", 0, "");
        L->abort.store(KL_CRASH);
    } else {
        Block* b = W->block;
        b->shared_base = W->shared_map;
        b->shared_cap = STATIC_SHARED_CAP;
        b->dyn = W->shared_map + STATIC_SHARED_CAP;
        b->dyn_size = dyn;
        if (sigsetjmp(W->jb, 1) != 0) {
            Worker* w = t_worker;
            w->in_fiber = 0;
            char msg[1024], module[512];
            unsigned long long off;
            describe_signal(w, msg, sizeof msg, &off, module, sizeof module);
            if (w->sig_code == KL_TIMEOUT || w->sig_code == KL_CRASH)
                record_error(w->L, w->sig_code, 0, nullptr, msg, off, module);
            w->L->abort.store(w->sig_code == KL_TIMEOUT ? KL_TIMEOUT : KL_CRASH);
        } else {
            for (;;) {
                if (L->abort.load(std::memory_order_relaxed)) break;
                unsigned long long k = L->next.fetch_add(1, std::memory_order_relaxed);
                if (k >= L->nblocks) break;
                unsigned long long idx = L->perm.empty() ? k : L->perm[k];
                int rc = run_block(W, idx);
                if (rc != KL_OK) {
                    if (rc > 0)
                        record_error(L, rc, W->block->err_line, W->block->err_file,
                                     W->block->err_msg, 0, "");
                    int expected = 0;
                    L->abort.compare_exchange_strong(expected, rc > 0 ? rc : KL_CRASH);
                    break;
                }
            }
        }
    }
    W = t_worker;
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&old_ss, nullptr);
    free(W->altstack);
    release_stacks(W->stacks);
    if (W->shared_map) munmap(W->shared_map, W->shared_map_len);
    free(W->block);
    t_worker = nullptr;
    delete W;
    {
        std::lock_guard<std::mutex> lk(L->mu);
        ++L->finished;
    }
    L->cv.notify_all();
}

// ------------------------------------------------------------- switch benchmark
void* g_bench_sched_sp;
#ifdef KL_UCONTEXT
ucontext_t g_bench_uc;
#endif
void bench_entry(Fiber* f) {
    for (;;) {
#ifdef KL_UCONTEXT
        swapcontext(uc_of(f), &g_bench_uc);
#else
        kl_ctx_switch(&f->sp, g_bench_sched_sp);
#endif
    }
}

}  // namespace klrt

using namespace klrt;

// =================================================================== entry points
KL_EXPORT int kl_rt_block_sync(Fiber* f, int line, const char* file, int kind, int pred,
                               const char* what) {
    Block* b = f->block;
    ++b->barriers;
    if (b->ndone > 0) {
        Fiber* gone = nullptr;
        for (int i = 0; i < b->n; ++i)
            if (b->fibers[i]->state == ST_DONE) { gone = b->fibers[i]; break; }
        Names nm = names_of(f), gn = names_of(gone ? gone : f);
        fail(b, f, KL_DEADLOCK, line, file,
             "%s at line %d: block %s: %d thread(s) already exited and can never arrive "
             "(thread %s)", what, line, nm.block, b->ndone, gn.thread);
    }
    if (b->bar_arrived == 0) {
        b->bar_line = line;
        b->bar_kind = kind;
        b->bar_what = what;
        b->bar_file = file;
        b->bar_count = 0;
        b->bar_first = f;
    } else if (b->bar_line != line || b->bar_kind != kind) {
        Names nm = names_of(f), fm = names_of(b->bar_first);
        fail(b, f, KL_DEADLOCK, b->bar_line, b->bar_file,
             "%s at line %d: threads of block %s wait at different barriers: thread %s at "
             "line %d, thread %s at %s line %d", b->bar_what, b->bar_line, nm.block, fm.thread,
             b->bar_line, nm.thread, what, line);
    }
    b->bar_count += pred != 0;
    f->state = ST_WAIT_BLOCK;
    f->wait_line = line;
    f->wait_file = file;
    f->wait_what = what;
    if (++b->bar_arrived == b->n) {
        int cnt = b->bar_count;
        b->bar_result = kind == BAR_COUNT ? cnt : kind == BAR_AND ? (cnt == b->n) : kind == BAR_OR ? (cnt > 0) : 0;
        b->bar_arrived = 0;
        for (int i = 0; i < b->n; ++i) push_ready(b, b->fibers[i]);
    }
    suspend(b, f);
    return b->bar_result;
}

KL_EXPORT void kl_rt_warp(Fiber* f, int kind, unsigned mask, int line, const char* file,
                          CollectiveFn fn, const char* what) {
    Block* b = f->block;
    ++b->warp_ops;
    WarpState& w = b->warps[f->warp];
    unsigned bit = 1u << f->lane;
    if (!(mask & bit)) {
        Names nm = names_of(f);
        fail(b, f, KL_DIVERGENT, line, file,
             "%s at line %d: the mask 0x%08x does not name the calling lane %u (thread %s of "
             "block %s)", what, line, mask, f->lane, nm.thread, nm.block);
    }
    unsigned eff = mask & w.exists;
    if (eff & w.done) {
        Names nm = names_of(f);
        fail(b, f, KL_DIVERGENT, line, file,
             "%s at line %d: block %s, warp %u: the mask 0x%08x names lanes 0x%08x that already "
             "exited", what, line, nm.block, f->warp, mask, eff & w.done);
    }
    int gi = -1, free_slot = -1;
    for (int i = 0; i < 32; ++i) {
        Group& g = w.groups[i];
        if (!g.used) {
            if (free_slot < 0) free_slot = i;
            continue;
        }
        if (g.kind == kind && g.mask == eff && g.fn == fn && (kind == W_SYNCWARP || g.line == line) &&
            !(g.arrived & bit)) {
            gi = i;
            break;
        }
    }
    if (gi < 0) {
        gi = free_slot;  // at most one pending group per lane: a slot is always free
        Group& g = w.groups[gi];
        g.used = true;
        g.kind = kind;
        g.mask = eff;
        g.fn = fn;
        g.line = line;
        g.file = file;
        g.what = what;
        g.arrived = 0;
        g.seq = b->seq++;
    }
    Group& g = w.groups[gi];
    g.arrived |= bit;
    f->state = ST_WAIT_WARP;
    f->wait_group = gi;
    f->wait_line = line;
    f->wait_file = file;
    f->wait_what = what;
    if (g.arrived == eff) {
        if (fn) fn(w.lanes, eff);
        g.used = false;
        for (unsigned l = 0; l < 32; ++l)
            if (eff >> l & 1u) push_ready(b, w.lanes[l]);
    }
    suspend(b, f);
}

KL_EXPORT unsigned kl_rt_activemask(Fiber* f, int line, const char* file) {
    Block* b = f->block;
    ++b->warp_ops;
    WarpState& w = b->warps[f->warp];
    w.active_wait |= 1u << f->lane;
    f->state = ST_WAIT_ACTIVE;
    f->wait_line = line;
    f->wait_what = "__activemask";
    f->wait_file = file;
    unsigned live = w.exists & ~w.done;
    if ((w.active_wait & live) == live) release_active(b, w);
    suspend(b, f);
    return (unsigned)f->a2;
}

KL_EXPORT void kl_rt_yield(Fiber* f) {
    Block* b = f->block;
    push_ready(b, f);
    suspend(b, f);
}

KL_EXPORT void* kl_rt_shared_static(Fiber* f, const void* key, size_t size, size_t align) {
    Block* b = f->block;
    for (int i = 0; i < b->nslots; ++i)
        if (b->slots[i].key == key) return b->slots[i].ptr;
    size_t off = (b->shared_used + align - 1) & ~(align - 1);
    if (off + size > b->shared_cap || b->nslots >= MAX_SLOTS)
        fail(b, f, KL_CRASH, 0, nullptr, "static __shared__ memory of one block exceeds %zu bytes",
             b->shared_cap);
    void* p = b->shared_base + off;
    memset(p, POISON, size);
    b->shared_used = off + size;
    b->slots[b->nslots].key = key;
    b->slots[b->nslots].ptr = p;
    ++b->nslots;
    return p;
}

KL_EXPORT void* kl_rt_dyn_shared(Fiber* f, size_t* size) {
    *size = f->block->dyn_size;
    return f->block->dyn;
}

KL_EXPORT void kl_rt_trap(Fiber* f, int code, int line, const char* file, const char* msg) {
    Block* b = f->block;
    Names nm = names_of(f);
    fail(b, f, code, line, file, "%s (thread %s of block %s, line %d)", msg, nm.thread, nm.block, line);
}

KL_EXPORT int kl_rt_run_grid(const LaunchCfg* cfg, void (*thread_main)(void*), void** args,
                             LaunchResult* res) {
    memset(res, 0, sizeof *res);
    auto t0 = std::chrono::steady_clock::now();
    const unsigned* g = cfg->grid;
    const unsigned* bl = cfg->block;
    unsigned long long nthreads = (unsigned long long)bl[0] * bl[1] * bl[2];
    if (!g[0] || !g[1] || !g[2] || !bl[0] || !bl[1] || !bl[2] || nthreads > 1024 || bl[2] > 64 ||
        g[1] > 65535 || g[2] > 65535 || g[0] > 0x7fffffffu) {
        res->code = KL_INVALID;
        snprintf(res->message, sizeof res->message,
                 "invalid launch configuration: grid (%u,%u,%u), block (%u,%u,%u)", g[0], g[1],
                 g[2], bl[0], bl[1], bl[2]);
        return res->code;
    }
    Launch* L = new Launch();
    L->cfg = *cfg;
    L->fn = thread_main;
    L->args = args;
    L->nthreads = (unsigned)nthreads;
    L->nblocks = (unsigned long long)g[0] * g[1] * g[2];
    uint64_t s = cfg->seed ^ 0x5851f42d4c957f2dull;
    if (L->nblocks <= (1ull << 24)) {
        L->perm.resize(L->nblocks);
        for (unsigned long long i = 0; i < L->nblocks; ++i) L->perm[i] = (uint32_t)i;
        for (unsigned long long i = L->nblocks; i > 1; --i) {
            unsigned long long j = splitmix(s) % i;
            std::swap(L->perm[i - 1], L->perm[j]);
        }
    }
    int T = cfg->threads > 0 ? cfg->threads : (int)std::thread::hardware_concurrency();
    if (T < 1) T = 1;
    if ((unsigned long long)T > L->nblocks) T = (int)L->nblocks;
    install_handlers();
    std::vector<std::thread> workers;
    workers.reserve((size_t)T);
    for (int i = 0; i < T; ++i) workers.emplace_back(worker_main, L, i);
    double timeout = cfg->timeout_s > 0 ? cfg->timeout_s : 1e9;
    auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(timeout));
    bool timed_out = false;
    {
        std::unique_lock<std::mutex> lk(L->mu);
        if (!L->cv.wait_until(lk, deadline, [&] { return L->finished == T; })) timed_out = true;
    }
    bool stuck = false;
    if (timed_out) {
        int expected = 0;
        L->abort.compare_exchange_strong(expected, KL_TIMEOUT);
        auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (;;) {
            {
                std::unique_lock<std::mutex> lk(L->mu);
                if (L->finished == T) break;
            }
            if (std::chrono::steady_clock::now() > give_up) {
                stuck = true;
                break;
            }
            for (auto& t : workers) pthread_kill(t.native_handle(), timeout_signal());
            std::unique_lock<std::mutex> lk(L->mu);
            L->cv.wait_for(lk, std::chrono::milliseconds(5), [&] { return L->finished == T; });
        }
        record_error(L, KL_TIMEOUT, 0, nullptr, "the launch did not finish in time", 0, "");
    }
    if (stuck) {
        // a worker ignores the abort signal: leave it (and the launch state it uses)
        // behind; this process should be discarded
        for (auto& t : workers) t.detach();
        res->code = KL_TIMEOUT;
        snprintf(res->message, sizeof res->message,
                 "the launch did not finish within %.3g s and a worker thread could not be "
                 "stopped; discard this process", cfg->timeout_s);
        res->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return res->code;
    }
    for (auto& t : workers) t.join();
    uninstall_handlers();
    res->code = L->err_code;
    res->line = L->err_line;
    snprintf(res->file, sizeof res->file, "%s", L->err_file);
    snprintf(res->message, sizeof res->message, "%s", L->err_msg);
    res->pc_offset = L->pc_offset;
    snprintf(res->module, sizeof res->module, "%s", L->module);
    res->blocks = L->blocks.load();
    res->fibers = L->fibers.load();
    res->switches = L->switches.load();
    res->barriers = L->barriers.load();
    res->warp_ops = L->warp_ops.load();
    res->threads = T;
    res->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    int code = res->code;
    delete L;
    return code;
}

// Nanoseconds per one-way context switch (a fiber and the scheduler ping-ponging).
KL_EXPORT double kl_rt_switch_benchmark(long iterations) {
    StackArena* a = acquire_stacks(1);
    if (!a) return -1.0;
    Fiber* f = fiber_in_slot(a->base);
    memset(static_cast<void*>(f), 0, sizeof *f);
    ctx_init(f, bench_entry);
    auto run = [&](long n) {
        for (long i = 0; i < n; ++i) {
#ifdef KL_UCONTEXT
            swapcontext(&g_bench_uc, uc_of(f));
#else
            kl_ctx_switch(&g_bench_sched_sp, f->sp);
#endif
        }
    };
    run(1000);
    auto t0 = std::chrono::steady_clock::now();
    run(iterations);
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    release_stacks(a);
    return ns / (2.0 * (double)iterations);
}

KL_EXPORT int kl_rt_abi_version() { return KL_RUNTIME_ABI; }

KL_EXPORT int kl_rt_uses_ucontext() {
#ifdef KL_UCONTEXT
    return 1;
#else
    return 0;
#endif
}

// struct sizes, checked by emulator.py against its ctypes mirrors
KL_EXPORT unsigned long long kl_rt_struct_sizes() {
    return ((unsigned long long)sizeof(LaunchCfg) << 32) | sizeof(LaunchResult);
}
