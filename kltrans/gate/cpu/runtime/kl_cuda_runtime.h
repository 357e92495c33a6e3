// kl_cuda_runtime.h - the CUDA device API for kltrans' CPU emulation backend.
//
// A kernel translated by kltrans.gate.cpu.translate is compiled as ordinary C++17 with
// this header included first. Each CUDA thread runs as a fiber (a user-space context
// with its own stack); the scheduler, the fiber switch and the grid runner live in
// kl_runtime.cpp (built once into libklrt.so and loaded RTLD_GLOBAL before any kernel
// module). This header holds everything the kernel source itself sees:
//
//   * qualifiers (__global__, __device__, __forceinline__, __launch_bounds__, ...) as
//     macros; __shared__ expands to an undeclared name on purpose: the translator
//     rewrites every __shared__ declaration, so one it could not see (made by a macro)
//     is a compile error at its line, not a silent per-process static;
//   * the macro __KLTRANS_CPU_EMULATION__ (and __CUDACC__, __CUDA_ARCH__ = 800 unless
//     given) so kernels can select portable code paths;
//   * vector types (float4, int2, ...), dim3, make_*;
//   * the built-in variables threadIdx/blockIdx/blockDim/gridDim, read from the current
//     fiber, which sits at the top of its own stack slot (no thread-local storage);
//   * barriers: __syncthreads*, __syncwarp and every warp collective (__shfl*_sync, vote,
//     __reduce_*_sync, __match_*_sync, __activemask) - each is a rendezvous in the runtime,
//     identified by its source line (a default argument of __builtin_LINE(), which GCC
//     evaluates at the call site, so #line directives map it to the CUDA file);
//   * atomics (GCC __atomic builtins: correct across the OS threads that run blocks);
//   * CUDA math and bit intrinsics, __half / __nv_bfloat16 with correctly rounded
//     conversions, cooperative groups (thread_block, tiles, reduce, scan).
#ifndef KL_CUDA_RUNTIME_H
#define KL_CUDA_RUNTIME_H

#define KL_RUNTIME_ABI 1

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <time.h>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#ifndef CUDART_VERSION
#define CUDART_VERSION 12000
#endif
#define __KLTRANS_CPU_EMULATION__ 1

// ------------------------------------------------------------------------ qualifiers
// every __shared__ declaration the translator sees is rewritten; one it cannot see (made
// by a macro) fails to compile with this name at its line instead of becoming a global
#define __shared__ KLTRANS_UNTRANSLATED___shared__
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ __attribute__((unused))
// __noinline__ is not a macro here: libstdc++ spells __attribute__((__noinline__)), which
// such a macro would break; the translator rewrites the token in kernel sources instead.
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __cluster_dims__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __cudart_builtin__
#define __device_builtin__
#define CUDART_CB
// __restrict__ is a GCC keyword already.

// ------------------------------------------------------------------ host-side API
// Namespace-scope host functions are removed by the translator; host code that stays
// (class members, constexpr helpers) may still name the runtime API. These stubs let it
// compile; they are never meant to run (they report an error and do nothing).
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorNotSupported = 801 };
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4
};
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9
};
template <class T> static inline cudaError_t cudaMalloc(T**, size_t) { return cudaErrorNotSupported; }
static inline cudaError_t cudaFree(void*) { return cudaErrorNotSupported; }
static inline cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind) { return cudaErrorNotSupported; }
static inline cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t = 0) { return cudaErrorNotSupported; }
static inline cudaError_t cudaMemset(void*, int, size_t) { return cudaErrorNotSupported; }
static inline cudaError_t cudaMemsetAsync(void*, int, size_t, cudaStream_t = 0) { return cudaErrorNotSupported; }
static inline cudaError_t cudaDeviceSynchronize() { return cudaErrorNotSupported; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaErrorNotSupported; }
static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
static inline const char* cudaGetErrorString(cudaError_t) { return "not available on the CPU emulator"; }
template <class T> static inline cudaError_t cudaFuncSetAttribute(T*, cudaFuncAttribute, int) { return cudaErrorNotSupported; }
template <class T> static inline cudaError_t cudaMemcpyToSymbol(const T&, const void*, size_t, size_t = 0, cudaMemcpyKind = cudaMemcpyHostToDevice) { return cudaErrorNotSupported; }

// ---------------------------------------------------------------------- vector types
#define KL_VEC1(N, T, A) struct __attribute__((aligned(A))) N##1 { T x; };
#define KL_VEC2(N, T, A) struct __attribute__((aligned(A))) N##2 { T x, y; };
#define KL_VEC3(N, T, A) struct __attribute__((aligned(A))) N##3 { T x, y, z; };
#define KL_VEC4(N, T, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };
#define KL_VECS(N, T, A1, A2, A3, A4) \
    KL_VEC1(N, T, A1) KL_VEC2(N, T, A2) KL_VEC3(N, T, A3) KL_VEC4(N, T, A4) \
    static inline N##1 make_##N##1(T x) { N##1 v; v.x = x; return v; } \
    static inline N##2 make_##N##2(T x, T y) { N##2 v; v.x = x; v.y = y; return v; } \
    static inline N##3 make_##N##3(T x, T y, T z) { N##3 v; v.x = x; v.y = y; v.z = z; return v; } \
    static inline N##4 make_##N##4(T x, T y, T z, T w) { \
        N##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
KL_VECS(char, signed char, 1, 2, 1, 4)
KL_VECS(uchar, unsigned char, 1, 2, 1, 4)
KL_VECS(short, short, 2, 4, 2, 8)
KL_VECS(ushort, unsigned short, 2, 4, 2, 8)
KL_VECS(int, int, 4, 8, 4, 16)
KL_VECS(uint, unsigned int, 4, 8, 4, 16)
KL_VECS(long, long, 8, 16, 8, 16)
KL_VECS(ulong, unsigned long, 8, 16, 8, 16)
KL_VECS(longlong, long long, 8, 16, 8, 16)
KL_VECS(ulonglong, unsigned long long, 8, 16, 8, 16)
KL_VECS(float, float, 4, 8, 4, 16)
KL_VECS(double, double, 8, 16, 8, 16)
#undef KL_VECS
#undef KL_VEC1
#undef KL_VEC2
#undef KL_VEC3
#undef KL_VEC4

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

static constexpr int warpSize = 32;

// ------------------------------------------------------------------- fibers (ABI)
namespace kl {
namespace detail {

// Each fiber's stack is a 2^KL_SLOT_SHIFT-byte slot aligned to its size: a guard page at
// the bottom, the Fiber record near the top, the stack below it. The current fiber is
// therefore found from the stack pointer alone (see fiber_of()). The record sits
// (slot index % 256) cache lines below the top of its slot, so that the records (and
// stack tops) of a block's fibers do not all map to the same cache sets.
enum { KL_SLOT_SHIFT = 17, KL_COLORS = 256 };
static const uintptr_t KL_SLOT = (uintptr_t)1 << KL_SLOT_SHIFT;

struct Fiber;
struct Block;
typedef void (*CollectiveFn)(Fiber* const* lanes, unsigned mask);

struct alignas(64) Fiber {
    // what the kernel reads
    uint3 tid;
    uint3 bid;
    dim3 bdim;
    dim3 gdim;
    unsigned linear;    // threadIdx linearized (x fastest)
    unsigned lane;      // linear % 32
    unsigned warp;      // linear / 32
    unsigned nthreads;  // threads in the block
    // collective exchange: the value a lane contributes (in) and receives (out)
    alignas(16) unsigned char in[32];
    alignas(16) unsigned char out[32];
    long long a0, a1, a2;  // per-collective arguments (source lane, width, predicate ...)
    const void* p0;        // an operator object (cooperative groups reduce / scan)
    // runtime bookkeeping (kl_runtime.cpp)
    void* sp;
    Block* block;
    int state;
    int wait_line;
    int wait_group;
    int wait_kind;
    const char* wait_what;
    const char* wait_file;
    void* uctx;  // ucontext fallback only
};

// the Fiber record of the slot holding address `a`
static inline __attribute__((always_inline, const)) Fiber* fiber_of(uintptr_t a) {
    uintptr_t s = a >> KL_SLOT_SHIFT;
    return reinterpret_cast<Fiber*>(((s + 1) << KL_SLOT_SHIFT) - sizeof(Fiber) -
                                    ((s & (KL_COLORS - 1)) << 6));
}

static inline __attribute__((always_inline, const)) Fiber* cur() {
    uintptr_t sp;
#if defined(__x86_64__)
    __asm__("movq %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    __asm__("mov %0, sp" : "=r"(sp));
#else
    sp = (uintptr_t)__builtin_frame_address(0);
#endif
    return fiber_of(sp);
}

// error codes shared with the runtime and emulator.py
enum {
    KL_OK = 0,
    KL_DEADLOCK = 1,
    KL_DIVERGENT = 2,
    KL_TIMEOUT = 3,
    KL_CRASH = 4,
    KL_UNSUPPORTED = 5,
    KL_INVALID = 6,
};

// block barrier kinds
enum { BAR_SYNC = 0, BAR_COUNT = 1, BAR_AND = 2, BAR_OR = 3 };
// warp collective kinds (part of the rendezvous key)
enum {
    W_SYNCWARP = 1, W_SHFL, W_SHFL_UP, W_SHFL_DOWN, W_SHFL_XOR, W_BALLOT, W_ANY, W_ALL,
    W_REDUCE, W_MATCH_ANY, W_MATCH_ALL, W_CG, W_UNI,
};

struct LaunchCfg {
    unsigned grid[3];
    unsigned block[3];
    unsigned long long smem;
    unsigned long long seed;
    int threads;
    int reserved;
    double timeout_s;
};

struct LaunchResult {
    int code;
    int line;
    char file[512];
    char message[1024];
    unsigned long long blocks, fibers, switches, barriers;
    double seconds;
    int threads;
    int reserved;
    unsigned long long pc_offset;  // crash / timeout: the interrupted pc, relative to module
    char module[512];              // the shared object holding that pc ("" if unknown)
    unsigned long long warp_ops;
};

}  // namespace detail
}  // namespace kl

// runtime entry points (libklrt.so)
extern "C" {
int kl_rt_block_sync(kl::detail::Fiber* f, int line, const char* file, int kind, int pred,
                     const char* what);
void kl_rt_warp(kl::detail::Fiber* f, int kind, unsigned mask, int line, const char* file,
                kl::detail::CollectiveFn fn, const char* what);
unsigned kl_rt_activemask(kl::detail::Fiber* f, int line, const char* file);
void kl_rt_yield(kl::detail::Fiber* f);
void* kl_rt_shared_static(kl::detail::Fiber* f, const void* key, size_t size, size_t align);
void* kl_rt_dyn_shared(kl::detail::Fiber* f, size_t* size);
__attribute__((noreturn)) void kl_rt_trap(kl::detail::Fiber* f, int code, int line, const char* file,
                                          const char* msg);
int kl_rt_run_grid(const kl::detail::LaunchCfg* cfg, void (*thread_main)(void*), void** args,
                   kl::detail::LaunchResult* result);
double kl_rt_switch_benchmark(long iterations);
}

// source location of a barrier / collective call: GCC evaluates these default arguments
// at the call site, so they name the CUDA line (through #line) of the kernel's call
#define KL_SRC int kl_line = __builtin_LINE(), const char* kl_file = __builtin_FILE()
#define KL_FWD kl_line, kl_file

#define threadIdx (::kl::detail::cur()->tid)
#define blockIdx (::kl::detail::cur()->bid)
#define blockDim (::kl::detail::cur()->bdim)
#define gridDim (::kl::detail::cur()->gdim)

namespace kl {
namespace detail {

template <class T>
static inline T& shared_static(const void* key) {
    return *static_cast<T*>(kl_rt_shared_static(cur(), key, sizeof(T),
                                                alignof(T) < 16 ? 16 : alignof(T)));
}
static inline void* dyn_shared() {
    size_t n;
    return kl_rt_dyn_shared(cur(), &n);
}
__attribute__((noreturn)) static inline void unsupported(const char* what, int line, const char* file) {
    kl_rt_trap(cur(), KL_UNSUPPORTED, line, file, what);
}

template <class T>
static inline void put_in(Fiber* f, const T& v) {
    static_assert(sizeof(T) <= sizeof(f->in), "warp collective operand larger than 32 bytes");
    __builtin_memcpy(f->in, &v, sizeof(T));
}
template <class T>
static inline T get_out(Fiber* f) {
    T v;
    __builtin_memcpy(&v, f->out, sizeof(T));
    return v;
}

// ---- warp collective completions: called once, by the last lane to arrive, with the
// ---- 32 lanes of the warp (null where the block has no such thread) and the mask of
// ---- participating lanes.
template <int KIND, size_t SIZE>
static void shfl_complete(Fiber* const* lanes, unsigned mask) {
    for (unsigned l = 0; l < 32; ++l) {
        if (!(mask >> l & 1u)) continue;
        Fiber* f = lanes[l];
        long long w = f->a1;
        if (w < 1 || w > 32) w = 32;
        unsigned uw = (unsigned)w;
        unsigned seg = l & ~(uw - 1u);
        long long s;
        if (KIND == W_SHFL) {
            s = (long long)(seg | ((unsigned)f->a0 & (uw - 1u)));
        } else if (KIND == W_SHFL_UP) {
            long long d = f->a0;
            s = ((long long)(l - seg) >= d) ? (long long)l - d : (long long)l;
        } else if (KIND == W_SHFL_DOWN) {
            long long d = f->a0;
            s = ((long long)(l - seg) + d < (long long)uw) ? (long long)l + d : (long long)l;
        } else {  // xor
            s = (long long)(l ^ (unsigned)f->a0);
            if (s > (long long)(seg | (uw - 1u))) s = l;
        }
        if (s < 0 || s > 31 || !(mask >> s & 1u) || lanes[s] == nullptr) s = l;
        __builtin_memcpy(f->out, lanes[s]->in, SIZE);
    }
}

template <int KIND>
static void vote_complete(Fiber* const* lanes, unsigned mask) {
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; ++l)
        if ((mask >> l & 1u) && lanes[l]->a0) ballot |= 1u << l;
    unsigned r = KIND == W_BALLOT ? ballot
               : KIND == W_ANY    ? (unsigned)(ballot != 0)
                                  : (unsigned)(ballot == mask);
    for (unsigned l = 0; l < 32; ++l)
        if (mask >> l & 1u) __builtin_memcpy(lanes[l]->out, &r, sizeof r);
}

template <class T, int OP>  // OP: 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor
static void reduce_complete(Fiber* const* lanes, unsigned mask) {
    bool first = true;
    T acc{};
    for (unsigned l = 0; l < 32; ++l) {
        if (!(mask >> l & 1u)) continue;
        T v;
        __builtin_memcpy(&v, lanes[l]->in, sizeof(T));
        if (first) { acc = v; first = false; continue; }
        switch (OP) {
            case 0: acc = (T)(acc + v); break;
            case 1: acc = v < acc ? v : acc; break;
            case 2: acc = v > acc ? v : acc; break;
            case 3: acc = (T)(acc & v); break;
            case 4: acc = (T)(acc | v); break;
            default: acc = (T)(acc ^ v); break;
        }
    }
    for (unsigned l = 0; l < 32; ++l)
        if (mask >> l & 1u) __builtin_memcpy(lanes[l]->out, &acc, sizeof(T));
}

template <size_t SIZE, bool ALL>
static void match_complete(Fiber* const* lanes, unsigned mask) {
    for (unsigned l = 0; l < 32; ++l) {
        if (!(mask >> l & 1u)) continue;
        unsigned m = 0;
        for (unsigned k = 0; k < 32; ++k)
            if ((mask >> k & 1u) && __builtin_memcmp(lanes[k]->in, lanes[l]->in, SIZE) == 0)
                m |= 1u << k;
        if (ALL) {
            int pred = m == mask;
            unsigned r = pred ? mask : 0u;
            __builtin_memcpy(lanes[l]->out, &r, sizeof r);
            __builtin_memcpy(lanes[l]->out + 4, &pred, sizeof pred);
        } else {
            __builtin_memcpy(lanes[l]->out, &m, sizeof m);
        }
    }
}

}  // namespace detail
}  // namespace kl

// ------------------------------------------------------------------------- barriers
static inline void __syncthreads(KL_SRC) {
    kl_rt_block_sync(::kl::detail::cur(), KL_FWD, ::kl::detail::BAR_SYNC, 0, "__syncthreads");
}
static inline int __syncthreads_count(int pred, KL_SRC) {
    return kl_rt_block_sync(::kl::detail::cur(), KL_FWD, ::kl::detail::BAR_COUNT, pred != 0,
                            "__syncthreads_count");
}
static inline int __syncthreads_and(int pred, KL_SRC) {
    return kl_rt_block_sync(::kl::detail::cur(), KL_FWD, ::kl::detail::BAR_AND, pred != 0,
                            "__syncthreads_and");
}
static inline int __syncthreads_or(int pred, KL_SRC) {
    return kl_rt_block_sync(::kl::detail::cur(), KL_FWD, ::kl::detail::BAR_OR, pred != 0,
                            "__syncthreads_or");
}
static inline void __syncwarp(unsigned mask = 0xffffffffu, KL_SRC) {
    kl_rt_warp(::kl::detail::cur(), ::kl::detail::W_SYNCWARP, mask, KL_FWD, nullptr,
               "__syncwarp");
}
static inline unsigned __activemask(KL_SRC) {
    return kl_rt_activemask(::kl::detail::cur(), KL_FWD);
}

namespace kl {
namespace detail {
template <int KIND, class T>
static inline T shfl(unsigned mask, T var, long long arg, int width, int line, const char* file, const char* what) {
    static_assert(std::is_trivially_copyable<T>::value, "shuffle of a non-trivially-copyable type");
    Fiber* f = cur();
    put_in(f, var);
    f->a0 = arg;
    f->a1 = width;
    kl_rt_warp(f, KIND, mask, line, file, &shfl_complete<KIND, sizeof(T)>, what);
    return get_out<T>(f);
}
template <int KIND>
static inline unsigned vote(unsigned mask, int pred, int line, const char* file, const char* what) {
    Fiber* f = cur();
    f->a0 = pred != 0;
    kl_rt_warp(f, KIND, mask, line, file, &vote_complete<KIND>, what);
    return get_out<unsigned>(f);
}
template <class T, int OP>
static inline T wreduce(unsigned mask, T v, int line, const char* file, const char* what) {
    Fiber* f = cur();
    put_in(f, v);
    kl_rt_warp(f, W_REDUCE, mask, line, file, &reduce_complete<T, OP>, what);
    return get_out<T>(f);
}
}  // namespace detail
}  // namespace kl

template <class T>
static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32,
                            KL_SRC) {
    return ::kl::detail::shfl<::kl::detail::W_SHFL>(mask, var, srcLane, width, KL_FWD,
                                                    "__shfl_sync");
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32,
                               KL_SRC) {
    return ::kl::detail::shfl<::kl::detail::W_SHFL_UP>(mask, var, delta, width, KL_FWD,
                                                       "__shfl_up_sync");
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32,
                                 KL_SRC) {
    return ::kl::detail::shfl<::kl::detail::W_SHFL_DOWN>(mask, var, delta, width, KL_FWD,
                                                         "__shfl_down_sync");
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32,
                                KL_SRC) {
    return ::kl::detail::shfl<::kl::detail::W_SHFL_XOR>(mask, var, laneMask, width, KL_FWD,
                                                        "__shfl_xor_sync");
}
// legacy (pre-CUDA 9) forms: the whole warp
template <class T>
static inline T __shfl(T var, int srcLane, int width = 32, KL_SRC) {
    return __shfl_sync(0xffffffffu, var, srcLane, width, KL_FWD);
}
template <class T>
static inline T __shfl_up(T var, unsigned d, int width = 32, KL_SRC) {
    return __shfl_up_sync(0xffffffffu, var, d, width, KL_FWD);
}
template <class T>
static inline T __shfl_down(T var, unsigned d, int width = 32, KL_SRC) {
    return __shfl_down_sync(0xffffffffu, var, d, width, KL_FWD);
}
template <class T>
static inline T __shfl_xor(T var, int m, int width = 32, KL_SRC) {
    return __shfl_xor_sync(0xffffffffu, var, m, width, KL_FWD);
}

static inline unsigned __ballot_sync(unsigned mask, int pred, KL_SRC) {
    return ::kl::detail::vote<::kl::detail::W_BALLOT>(mask, pred, KL_FWD, "__ballot_sync");
}
static inline int __any_sync(unsigned mask, int pred, KL_SRC) {
    return (int)::kl::detail::vote<::kl::detail::W_ANY>(mask, pred, KL_FWD, "__any_sync");
}
static inline int __all_sync(unsigned mask, int pred, KL_SRC) {
    return (int)::kl::detail::vote<::kl::detail::W_ALL>(mask, pred, KL_FWD, "__all_sync");
}
static inline int __uni_sync(unsigned mask, int pred, KL_SRC) {
    return (int)::kl::detail::vote<::kl::detail::W_ALL>(mask, pred, KL_FWD, "__uni_sync");
}
static inline unsigned __ballot(int pred, KL_SRC) {
    return __ballot_sync(0xffffffffu, pred, KL_FWD);
}
static inline int __any(int pred, KL_SRC) {
    return __any_sync(0xffffffffu, pred, KL_FWD);
}
static inline int __all(int pred, KL_SRC) {
    return __all_sync(0xffffffffu, pred, KL_FWD);
}

#define KL_WREDUCE(NAME, OP)                                                                \
    static inline int NAME(unsigned mask, int v, KL_SRC) {          \
        return ::kl::detail::wreduce<int, OP>(mask, v, KL_FWD, #NAME);                     \
    }                                                                                       \
    static inline unsigned NAME(unsigned mask, unsigned v, KL_SRC) { \
        return ::kl::detail::wreduce<unsigned, OP>(mask, v, KL_FWD, #NAME);                \
    }
KL_WREDUCE(__reduce_add_sync, 0)
KL_WREDUCE(__reduce_min_sync, 1)
KL_WREDUCE(__reduce_max_sync, 2)
KL_WREDUCE(__reduce_and_sync, 3)
KL_WREDUCE(__reduce_or_sync, 4)
KL_WREDUCE(__reduce_xor_sync, 5)
#undef KL_WREDUCE

template <class T>
static inline unsigned __match_any_sync(unsigned mask, T value, KL_SRC) {
    ::kl::detail::Fiber* f = ::kl::detail::cur();
    ::kl::detail::put_in(f, value);
    kl_rt_warp(f, ::kl::detail::W_MATCH_ANY, mask, KL_FWD,
               &::kl::detail::match_complete<sizeof(T), false>, "__match_any_sync");
    return ::kl::detail::get_out<unsigned>(f);
}
template <class T>
static inline unsigned __match_all_sync(unsigned mask, T value, int* pred,
                                        KL_SRC) {
    ::kl::detail::Fiber* f = ::kl::detail::cur();
    ::kl::detail::put_in(f, value);
    kl_rt_warp(f, ::kl::detail::W_MATCH_ALL, mask, KL_FWD,
               &::kl::detail::match_complete<sizeof(T), true>, "__match_all_sync");
    unsigned r = ::kl::detail::get_out<unsigned>(f);
    int p;
    __builtin_memcpy(&p, f->out + 4, sizeof p);
    if (pred) *pred = p;
    return r;
}

static inline unsigned __lanemask_lt() { return (1u << ::kl::detail::cur()->lane) - 1u; }
static inline unsigned __lanemask_le() { return (2u << ::kl::detail::cur()->lane) - 1u; }
static inline unsigned __lanemask_eq() { return 1u << ::kl::detail::cur()->lane; }
static inline unsigned __lanemask_gt() { return ~__lanemask_le(); }
static inline unsigned __lanemask_ge() { return ~__lanemask_lt(); }

// ------------------------------------------------------------------ fences, misc
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __nanosleep(unsigned) { kl_rt_yield(::kl::detail::cur()); }
static inline long long clock64() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static inline unsigned long long __globaltimer() { return (unsigned long long)clock64(); }
__attribute__((noreturn)) static inline void __trap(KL_SRC) {
    kl_rt_trap(::kl::detail::cur(), ::kl::detail::KL_CRASH, KL_FWD, "__trap() called");
}
__attribute__((noreturn)) static inline void __brkpt(KL_SRC) {
    kl_rt_trap(::kl::detail::cur(), ::kl::detail::KL_CRASH, KL_FWD, "__brkpt() called");
}
static inline void __prof_trigger(int) {}
static inline unsigned __smid() { return 0; }
static inline unsigned __nsmid() { return 1; }
static inline bool __isShared(const void*) { return false; }
static inline bool __isGlobal(const void*) { return true; }

namespace kl {
namespace detail {
__attribute__((noreturn)) static inline void assert_fail(const char* expr, int line, const char* file) {
    char buf[512];
    snprintf(buf, sizeof buf, "assertion failed: %s", expr);
    kl_rt_trap(cur(), KL_CRASH, line, file, buf);
}
}  // namespace detail
}  // namespace kl
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : ::kl::detail::assert_fail(#e, __LINE__, __FILE__))
#endif

// ------------------------------------------------------------------ memory loads
template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T __ldcg(const T* p) { return *p; }
template <class T> static inline T __ldca(const T* p) { return *p; }
template <class T> static inline T __ldcs(const T* p) { return *p; }
template <class T> static inline T __ldlu(const T* p) { return *p; }
template <class T> static inline T __ldcv(const T* p) { return *p; }
template <class T> static inline void __stwb(T* p, T v) { *p = v; }
template <class T> static inline void __stcg(T* p, T v) { *p = v; }
template <class T> static inline void __stcs(T* p, T v) { *p = v; }
template <class T> static inline void __stwt(T* p, T v) { *p = v; }
static inline void __prefetch_global_L1(const void*) {}
static inline void __prefetch_global_L2(const void*) {}

// --------------------------------------------------------------------------- atomics
// GCC __atomic builtins (relaxed, like CUDA's atomics): exact across the OS threads
// that run different blocks. Floating point adds are compare-and-swap loops.
#define KL_ATOMIC_INT(T)                                                                   \
    static inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); } \
    static inline T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); } \
    static inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); } \
    static inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }   \
    static inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); } \
    static inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); } \
    static inline T atomicCAS(T* p, T cmp, T v) {                                          \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
        return cmp;                                                                        \
    }                                                                                      \
    static inline T atomicMax(T* p, T v) {                                                 \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
        while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, \
                                                       __ATOMIC_RELAXED)) {}               \
        return old;                                                                        \
    }                                                                                      \
    static inline T atomicMin(T* p, T v) {                                                 \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
        while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, \
                                                       __ATOMIC_RELAXED)) {}               \
        return old;                                                                        \
    }
KL_ATOMIC_INT(int)
KL_ATOMIC_INT(unsigned int)
KL_ATOMIC_INT(unsigned long long)
KL_ATOMIC_INT(long long)
#undef KL_ATOMIC_INT

static inline unsigned short atomicCAS(unsigned short* p, unsigned short cmp, unsigned short v) {
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return cmp;
}
static inline unsigned atomicInc(unsigned* p, unsigned limit) {
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED), nw;
    do {
        nw = old >= limit ? 0u : old + 1u;
    } while (!__atomic_compare_exchange_n(p, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
static inline unsigned atomicDec(unsigned* p, unsigned limit) {
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED), nw;
    do {
        nw = (old == 0u || old > limit) ? limit : old - 1u;
    } while (!__atomic_compare_exchange_n(p, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}

namespace kl {
namespace detail {
template <class F, class U, class Op>
static inline F atomic_fp(F* p, Op op) {
    static_assert(sizeof(F) == sizeof(U), "");
    U* u = reinterpret_cast<U*>(p);
    U old = __atomic_load_n(u, __ATOMIC_RELAXED), nw;
    F fo, fn;
    do {
        __builtin_memcpy(&fo, &old, sizeof fo);
        fn = op(fo);
        __builtin_memcpy(&nw, &fn, sizeof nw);
    } while (!__atomic_compare_exchange_n(u, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    __builtin_memcpy(&fo, &old, sizeof fo);
    return fo;
}
}  // namespace detail
}  // namespace kl

static inline float atomicAdd(float* p, float v) {
    return ::kl::detail::atomic_fp<float, unsigned>(p, [v](float o) { return o + v; });
}
static inline double atomicAdd(double* p, double v) {
    return ::kl::detail::atomic_fp<double, unsigned long long>(p, [v](double o) { return o + v; });
}
static inline float atomicSub(float* p, float v) {
    return ::kl::detail::atomic_fp<float, unsigned>(p, [v](float o) { return o - v; });
}
static inline float atomicExch(float* p, float v) {
    unsigned nv, old;
    __builtin_memcpy(&nv, &v, 4);
    old = __atomic_exchange_n(reinterpret_cast<unsigned*>(p), nv, __ATOMIC_RELAXED);
    float r;
    __builtin_memcpy(&r, &old, 4);
    return r;
}
static inline float atomicMax(float* p, float v) {
    return ::kl::detail::atomic_fp<float, unsigned>(p, [v](float o) { return fmaxf(o, v); });
}
static inline float atomicMin(float* p, float v) {
    return ::kl::detail::atomic_fp<float, unsigned>(p, [v](float o) { return fminf(o, v); });
}
static inline double atomicMax(double* p, double v) {
    return ::kl::detail::atomic_fp<double, unsigned long long>(p, [v](double o) { return fmax(o, v); });
}
static inline double atomicMin(double* p, double v) {
    return ::kl::detail::atomic_fp<double, unsigned long long>(p, [v](double o) { return fmin(o, v); });
}
// scope variants
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec

// ---------------------------------------------------------------------- min / max
#define KL_MINMAX(A, B, R)                                                  \
    static inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }    \
    static inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
KL_MINMAX(int, int, int)
KL_MINMAX(unsigned int, unsigned int, unsigned int)
KL_MINMAX(int, unsigned int, unsigned int)
KL_MINMAX(unsigned int, int, unsigned int)
KL_MINMAX(long, long, long)
KL_MINMAX(unsigned long, unsigned long, unsigned long)
KL_MINMAX(long, unsigned long, unsigned long)
KL_MINMAX(unsigned long, long, unsigned long)
KL_MINMAX(long long, long long, long long)
KL_MINMAX(unsigned long long, unsigned long long, unsigned long long)
KL_MINMAX(long long, unsigned long long, unsigned long long)
KL_MINMAX(unsigned long long, long long, unsigned long long)
#undef KL_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(float a, double b) { return fmin(a, b); }
static inline double max(float a, double b) { return fmax(a, b); }
static inline double min(double a, float b) { return fmin(a, b); }
static inline double max(double a, float b) { return fmax(a, b); }
static inline int umin(unsigned a, unsigned b) { return (int)(a < b ? a : b); }
static inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ------------------------------------------------------------------ float math
// glibc's correctly rounded or faithfully rounded functions stand in for CUDA's (which
// are within a few ulp); the fast __xxxf intrinsics are computed accurately too.
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
// glibc declares __expf & co. itself (its internal names): alias them as macros
#define __expf expf
#define __exp10f exp10f
#define __logf logf
#define __log2f log2f
#define __log10f log10f
#define __sinf sinf
#define __cosf cosf
#define __tanf tanf
#define __powf powf
#define __sincosf sincosf
static inline float __fdividef(float a, float b) { return a / b; }
static inline double __fdivide(double a, double b) { return a / b; }
static inline float fdividef(float a, float b) { return a / b; }
static inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }
static inline float sinpif(float x) { return sinf((float)M_PI * x); }
static inline float cospif(float x) { return cosf((float)M_PI * x); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
static inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
static inline float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
// inverse error functions (not in glibc): Giles' approximation refined by Newton steps
static inline double erfinv(double x) {
    if (!(x > -1.0 && x < 1.0)) return x == 1.0 ? INFINITY : x == -1.0 ? -INFINITY : NAN;
    double w = -log((1.0 - x) * (1.0 + x)), p;
    if (w < 6.25) {
        w -= 3.125;
        p = -3.6444120640178196996e-21;
        p = -1.685059138182016589e-19 + p * w; p = 1.2858480715256400167e-18 + p * w;
        p = 1.115787767802518096e-17 + p * w; p = -1.333171662854620906e-16 + p * w;
        p = 2.0972767875968561637e-17 + p * w; p = 6.6376381343583238325e-15 + p * w;
        p = -4.0545662729752068639e-14 + p * w; p = -8.1519341976054721522e-14 + p * w;
        p = 2.6335093153082322977e-12 + p * w; p = -1.2975133253453532498e-11 + p * w;
        p = -5.4154120542946279317e-11 + p * w; p = 1.051212273321532285e-09 + p * w;
        p = -4.1126339803469836976e-09 + p * w; p = -2.9070369957882005086e-08 + p * w;
        p = 4.2347877827932403518e-07 + p * w; p = -1.3654692000834678645e-06 + p * w;
        p = -1.3882523362786468719e-05 + p * w; p = 0.0001867342080340571352 + p * w;
        p = -0.00074070253416626697512 + p * w; p = -0.0060336708714301490533 + p * w;
        p = 0.24015818242558961693 + p * w; p = 1.6536545626831027356 + p * w;
    } else if (w < 16.0) {
        w = sqrt(w) - 3.25;
        p = 2.2137376921775787049e-09;
        p = 9.0756561938885390979e-08 + p * w; p = -2.7517406297064545428e-07 + p * w;
        p = 1.8239629214389227755e-08 + p * w; p = 1.5027403968909827627e-06 + p * w;
        p = -4.013867526981545969e-06 + p * w; p = 2.9234449089955446044e-06 + p * w;
        p = 1.2475304481671778723e-05 + p * w; p = -4.7318229009055733981e-05 + p * w;
        p = 6.8284851459573175448e-05 + p * w; p = 2.4031110387097893999e-05 + p * w;
        p = -0.0003550375203628474796 + p * w; p = 0.00095328937973738049703 + p * w;
        p = -0.0016882755560235047313 + p * w; p = 0.0024914420961078508066 + p * w;
        p = -0.0037512085075692412107 + p * w; p = 0.005370914553590063617 + p * w;
        p = 1.0052589676941592334 + p * w; p = 3.0838856104922207635 + p * w;
    } else {
        w = sqrt(w) - 5.0;
        p = -2.7109920616438573243e-11;
        p = -2.5556418169965252055e-10 + p * w; p = 1.5076572693500548083e-09 + p * w;
        p = -3.7894654401267369937e-09 + p * w; p = 7.6157012080783393804e-09 + p * w;
        p = -1.4960026627149240478e-08 + p * w; p = 2.9147953450901080826e-08 + p * w;
        p = -6.7711997758452339498e-08 + p * w; p = 2.2900482228026654717e-07 + p * w;
        p = -9.9298272942317002539e-07 + p * w; p = 4.5260625972231537039e-06 + p * w;
        p = -1.9681778105531670567e-05 + p * w; p = 7.5995277030017761139e-05 + p * w;
        p = -0.00021503011930044477347 + p * w; p = -0.00013871931833623122026 + p * w;
        p = 1.0103004648645343977 + p * w; p = 4.8499064014085844221 + p * w;
    }
    double y = p * x;
    for (int i = 0; i < 2; ++i) y -= (erf(y) - x) / (1.1283791670955126 * exp(-y * y));
    return y;
}
static inline float erfinvf(float x) { return (float)erfinv((double)x); }
static inline double erfcinv(double x) { return erfinv(1.0 - x); }
static inline float erfcinvf(float x) { return (float)erfinv(1.0 - (double)x); }
static inline float normcdfinvf(float p) { return (float)(-M_SQRT2 * erfcinv(2.0 * (double)p)); }
static inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __drcp_rn(double a) { return 1.0 / a; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

static inline int __float_as_int(float x) { int r; __builtin_memcpy(&r, &x, 4); return r; }
static inline unsigned __float_as_uint(float x) { unsigned r; __builtin_memcpy(&r, &x, 4); return r; }
static inline float __int_as_float(int x) { float r; __builtin_memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned x) { float r; __builtin_memcpy(&r, &x, 4); return r; }
static inline long long __double_as_longlong(double x) { long long r; __builtin_memcpy(&r, &x, 8); return r; }
static inline double __longlong_as_double(long long x) { double r; __builtin_memcpy(&r, &x, 8); return r; }
static inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
static inline int __double2loint(double x) { return (int)__double_as_longlong(x); }
static inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}

// float/double -> integer conversions in the four rounding modes (saturating like PTX)
namespace kl {
namespace detail {
template <class I, class F>
static inline I f2i(F x) {
    if (x != x) return 0;
    if (x <= (F)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
    if (x >= (F)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
    return (I)x;
}
}  // namespace detail
}  // namespace kl
#define KL_F2I_F(NAME, I)                                                                   \
    static inline I NAME##_rn(float x) { return ::kl::detail::f2i<I, float>(nearbyintf(x)); } \
    static inline I NAME##_rz(float x) { return ::kl::detail::f2i<I, float>(truncf(x)); }     \
    static inline I NAME##_rd(float x) { return ::kl::detail::f2i<I, float>(floorf(x)); }     \
    static inline I NAME##_ru(float x) { return ::kl::detail::f2i<I, float>(ceilf(x)); }
#define KL_F2I_D(NAME, I)                                                                      \
    static inline I NAME##_rn(double x) { return ::kl::detail::f2i<I, double>(nearbyint(x)); } \
    static inline I NAME##_rz(double x) { return ::kl::detail::f2i<I, double>(trunc(x)); }     \
    static inline I NAME##_rd(double x) { return ::kl::detail::f2i<I, double>(floor(x)); }     \
    static inline I NAME##_ru(double x) { return ::kl::detail::f2i<I, double>(ceil(x)); }
KL_F2I_F(__float2int, int)
KL_F2I_F(__float2uint, unsigned int)
KL_F2I_F(__float2ll, long long)
KL_F2I_F(__float2ull, unsigned long long)
KL_F2I_D(__double2int, int)
KL_F2I_D(__double2uint, unsigned int)
KL_F2I_D(__double2ll, long long)
KL_F2I_D(__double2ull, unsigned long long)
#undef KL_F2I_F
#undef KL_F2I_D
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline float __ull2float_rn(unsigned long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }
static inline float __double2float_rn(double x) { return (float)x; }

// ------------------------------------------------------------------ integer intrinsics
// bit counts by arithmetic: __builtin_popcount is a call into libgcc (__popcountdi2) where
// the target has no popcnt instruction, and a kernel's module may call nothing outside it
static inline int __popc(unsigned x) {
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (int)((((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}
static inline int __popcll(unsigned long long x) {
    return __popc((unsigned)x) + __popc((unsigned)(x >> 32));
}
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
static inline unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }
static inline unsigned __sad(int a, int b, unsigned c) { return (unsigned)(a > b ? a - b : b - a) + c; }
static inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return (a > b ? a - b : b - a) + c; }
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) {
        unsigned sel = (s >> (4 * i)) & 7u;
        r |= (unsigned)((v >> (8 * sel)) & 0xffu) << (8 * i);
    }
    return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)((v << (s & 31u)) >> 32);
}
static inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)((v << (s > 32u ? 32u : s)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)(v >> (s & 31u));
}
static inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)(v >> (s > 32u ? 32u : s));
}
static inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; ++i)
        c += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
    return c;
}
static inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
    for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return c;
}

// ------------------------------------------------------------------ math constants
#define CUDART_INF_F __int_as_float(0x7f800000)
#define CUDART_NAN_F __int_as_float(0x7fffffff)
#define CUDART_MIN_DENORM_F __int_as_float(0x00000001)
#define CUDART_MAX_NORMAL_F __int_as_float(0x7f7fffff)
#define CUDART_NEG_ZERO_F __int_as_float(0x80000000)
#define CUDART_ZERO_F 0.0f
#define CUDART_ONE_F 1.0f
#define CUDART_PI_F 3.141592654f
#define CUDART_PIO2_F 1.570796327f
#define CUDART_2_OVER_PI_F 0.636619772f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_2_F 1.414213562f
#define CUDART_L2E_F 1.442695041f
#define CUDART_LN2_F 0.693147181f
#define CUDART_INF __longlong_as_double(0x7ff0000000000000LL)
#define CUDART_NAN __longlong_as_double(0xfff8000000000000LL)
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_LN2 6.9314718055994529e-1
#define CUDART_L2E 1.4426950408889634e+0

// --------------------------------------------------------- __half and __nv_bfloat16
namespace kl {
namespace detail {
enum { RN = 0, RZ = 1, RD = 2, RU = 3 };

static inline uint64_t round_shift(uint64_t m, int shift, bool neg, int mode) {
    if (shift <= 0) return m << (-shift);
    uint64_t r, rem, half;
    if (shift >= 64) {
        r = 0;
        rem = m;
        half = ~0ull;  // larger than any rem: never a tie, never above half
    } else {
        r = m >> shift;
        rem = m & ((1ull << shift) - 1);
        half = 1ull << (shift - 1);
    }
    bool up;
    switch (mode) {
        case RZ: up = false; break;
        case RU: up = rem != 0 && !neg; break;
        case RD: up = rem != 0 && neg; break;
        default: up = rem > half || (rem == half && (r & 1)); break;
    }
    return r + (up ? 1 : 0);
}

// v = sig * 2^exp2 (sig != 0) rounded to a binary format with EB exponent bits and MB
// fraction bits; returns the encoding without the sign bit.
template <int EB, int MB>
static inline uint32_t to_small(bool neg, int exp2, uint64_t sig, int mode) {
    const int bias = (1 << (EB - 1)) - 1;
    const int emin = 1 - bias;
    const int emax = bias;
    int e = exp2 + (63 - __builtin_clzll(sig));
    uint32_t inf = ((1u << EB) - 1u) << MB;
    uint32_t maxfin = inf - 1u;
    if (e < emin) {
        uint64_t q = round_shift(sig, emin - MB - exp2, neg, mode);
        return (uint32_t)q;  // q == 1 << MB encodes the smallest normal
    }
    uint64_t q = round_shift(sig, e - MB - exp2, neg, mode);
    if (q >> (MB + 1)) {
        q >>= 1;
        ++e;
    }
    if (e > emax) {
        bool to_inf = mode == RN || (mode == RU && !neg) || (mode == RD && neg);
        return to_inf ? inf : maxfin;
    }
    return ((uint32_t)(e + bias) << MB) | (uint32_t)(q & ((1ull << MB) - 1));
}

template <int EB, int MB>
static inline uint32_t from_float(float f, int mode) {
    uint32_t x;
    __builtin_memcpy(&x, &f, 4);
    uint32_t sign = (x >> 31) << (EB + MB);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u)
        return ax > 0x7f800000u ? ((1u << (EB + MB)) - 1u) : (sign | (((1u << EB) - 1u) << MB));
    if (ax == 0) return sign;
    uint32_t e = ax >> 23, m = ax & 0x7fffffu;
    int exp2 = e ? (int)e - 150 : -149;
    uint64_t sig = e ? (m | 0x800000u) : m;
    return sign | to_small<EB, MB>(x >> 31, exp2, sig, mode);
}

template <int EB, int MB>
static inline uint32_t from_double(double d, int mode) {
    uint64_t x;
    __builtin_memcpy(&x, &d, 8);
    uint32_t sign = (uint32_t)(x >> 63) << (EB + MB);
    uint64_t ax = x & 0x7fffffffffffffffull;
    if (ax >= 0x7ff0000000000000ull)
        return ax > 0x7ff0000000000000ull ? ((1u << (EB + MB)) - 1u)
                                          : (sign | (((1u << EB) - 1u) << MB));
    if (ax == 0) return sign;
    uint64_t e = ax >> 52, m = ax & 0xfffffffffffffull;
    int exp2 = e ? (int)e - 1075 : -1074;
    uint64_t sig = e ? (m | (1ull << 52)) : m;
    return sign | to_small<EB, MB>(x >> 63, exp2, sig, mode);
}

static inline unsigned short f2h_rn(float f) {
    uint32_t x;
    __builtin_memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return ax > 0x7f800000u ? 0x7fffu : (unsigned short)(sign | 0x7c00u);
    if (ax >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
    if (ax >= 0x38800000u) {  // normal half
        uint32_t r = ax - 0x38000000u;
        uint32_t h = r >> 13, rem = r & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
        return (unsigned short)(sign | h);
    }
    return (unsigned short)(sign | from_float<5, 10>(__builtin_bit_cast(float, ax), RN));
}
static inline float h2f(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0x1f) {
        x = sign | 0x7f800000u | (m << 13);
    } else if (e) {
        x = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m) {  // subnormal: m * 2^-24, exact in float
        float v = (float)m * 5.9604644775390625e-08f;
        return (h & 0x8000u) ? -v : v;
    } else {
        x = sign;
    }
    float r;
    __builtin_memcpy(&r, &x, 4);
    return r;
}
static inline unsigned short f2bf_rn(float f) {
    uint32_t x;
    __builtin_memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    x += 0x7fffu + ((x >> 16) & 1u);
    return (unsigned short)(x >> 16);
}
static inline float bf2f(unsigned short b) {
    uint32_t x = (uint32_t)b << 16;
    float r;
    __builtin_memcpy(&r, &x, 4);
    return r;
}
}  // namespace detail
}  // namespace kl

struct __half_raw { unsigned short x; };
struct __nv_bfloat16_raw { unsigned short x; };
struct __half2_raw { unsigned short x, y; };
struct __nv_bfloat162_raw { unsigned short x, y; };

struct __attribute__((aligned(2))) __half {
    unsigned short __x;
    __half() = default;
    constexpr __half(const __half_raw& r) : __x(r.x) {}
    __half(float f) : __x(::kl::detail::f2h_rn(f)) {}
    __half(double d) : __x((unsigned short)::kl::detail::from_double<5, 10>(d, 0)) {}
    __half(int v) : __half((float)v) {}
    __half(unsigned int v) : __half((float)v) {}
    __half(short v) : __half((float)v) {}
    __half(unsigned short v) : __half((float)v) {}
    __half(long long v) : __half((double)v) {}
    __half(unsigned long long v) : __half((double)v) {}
    __half& operator=(const __half_raw& r) { __x = r.x; return *this; }
    operator float() const { return ::kl::detail::h2f(__x); }
    operator __half_raw() const { return __half_raw{__x}; }
};
struct __attribute__((aligned(2))) __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
    __nv_bfloat16(float f) : __x(::kl::detail::f2bf_rn(f)) {}
    __nv_bfloat16(double d) : __x((unsigned short)::kl::detail::from_double<8, 7>(d, 0)) {}
    __nv_bfloat16(int v) : __nv_bfloat16((float)v) {}
    __nv_bfloat16(unsigned int v) : __nv_bfloat16((float)v) {}
    __nv_bfloat16(short v) : __nv_bfloat16((float)v) {}
    __nv_bfloat16(unsigned short v) : __nv_bfloat16((float)v) {}
    __nv_bfloat16(long long v) : __nv_bfloat16((double)v) {}
    __nv_bfloat16(unsigned long long v) : __nv_bfloat16((double)v) {}
    __nv_bfloat16& operator=(const __nv_bfloat16_raw& r) { __x = r.x; return *this; }
    operator float() const { return ::kl::detail::bf2f(__x); }
    operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
};
struct __attribute__((aligned(4))) __half2 {
    __half x, y;
    __half2() = default;
    constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
    __half2(const __half2_raw& r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
    operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};
struct __attribute__((aligned(4))) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
    __nv_bfloat162(const __nv_bfloat162_raw& r)
        : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
    operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.__x, y.__x}; }
};
typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

namespace kl {
namespace detail {
static inline __half mkh(unsigned short b) { return __half(__half_raw{b}); }
static inline __nv_bfloat16 mkb(unsigned short b) { return __nv_bfloat16(__nv_bfloat16_raw{b}); }
static inline __half f2h(float f, int mode) {
    return mode == RN ? mkh(f2h_rn(f)) : mkh((unsigned short)from_float<5, 10>(f, mode));
}
static inline __nv_bfloat16 f2b(float f, int mode) {
    return mode == RN ? mkb(f2bf_rn(f)) : mkb((unsigned short)from_float<8, 7>(f, mode));
}
// the exact result of one operation on two halves (or bf16s) fits a double, so rounding
// the double once gives the correctly rounded CUDA result
static inline __half h_of(double d) { return mkh((unsigned short)from_double<5, 10>(d, RN)); }
static inline __nv_bfloat16 b_of(double d) { return mkb((unsigned short)from_double<8, 7>(d, RN)); }
}  // namespace detail
}  // namespace kl

// conversions
static inline __half __float2half(float f) { return ::kl::detail::f2h(f, 0); }
static inline __half __float2half_rn(float f) { return ::kl::detail::f2h(f, 0); }
static inline __half __float2half_rz(float f) { return ::kl::detail::f2h(f, 1); }
static inline __half __float2half_rd(float f) { return ::kl::detail::f2h(f, 2); }
static inline __half __float2half_ru(float f) { return ::kl::detail::f2h(f, 3); }
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return ::kl::detail::h2f(h.__x); }
static inline __half2 __float2half2_rn(float f) { return __half2(__float2half(f), __float2half(f)); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__float2half(a), __float2half(b)); }
static inline __half2 __float22half2_rn(float2 v) { return __floats2half2_rn(v.x, v.y); }
static inline float2 __half22float2(__half2 h) { return make_float2(__half2float(h.x), __half2float(h.y)); }
static inline __half2 __half2half2(__half h) { return __half2(h, h); }
static inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline float __low2float(__half2 h) { return __half2float(h.x); }
static inline float __high2float(__half2 h) { return __half2float(h.y); }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static inline __half2 __low2half2(__half2 a) { return __half2(a.x, a.x); }
static inline __half2 __high2half2(__half2 a) { return __half2(a.y, a.y); }
static inline __half2 __lowhigh2highlow(__half2 a) { return __half2(a.y, a.x); }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline __half __short_as_half(short v) { return ::kl::detail::mkh((unsigned short)v); }
static inline __half __ushort_as_half(unsigned short v) { return ::kl::detail::mkh(v); }
static inline int __half2int_rn(__half h) { return __float2int_rn(__half2float(h)); }
static inline int __half2int_rz(__half h) { return __float2int_rz(__half2float(h)); }
static inline int __half2int_rd(__half h) { return __float2int_rd(__half2float(h)); }
static inline int __half2int_ru(__half h) { return __float2int_ru(__half2float(h)); }
static inline unsigned __half2uint_rz(__half h) { return __float2uint_rz(__half2float(h)); }
static inline unsigned __half2uint_rn(__half h) { return __float2uint_rn(__half2float(h)); }
static inline short __half2short_rz(__half h) { return (short)__float2int_rz(__half2float(h)); }
static inline unsigned short __half2ushort_rz(__half h) { return (unsigned short)__float2uint_rz(__half2float(h)); }
static inline long long __half2ll_rz(__half h) { return __float2ll_rz(__half2float(h)); }
static inline __half __int2half_rn(int v) { return __half(v); }
static inline __half __uint2half_rn(unsigned v) { return __half(v); }
static inline __half __short2half_rn(short v) { return __half(v); }
static inline __half __ushort2half_rn(unsigned short v) { return __half(v); }
static inline __half __ll2half_rn(long long v) { return __half(v); }
static inline __half __ull2half_rn(unsigned long long v) { return __half(v); }

static inline __nv_bfloat16 __float2bfloat16(float f) { return ::kl::detail::f2b(f, 0); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return ::kl::detail::f2b(f, 0); }
static inline __nv_bfloat16 __float2bfloat16_rz(float f) { return ::kl::detail::f2b(f, 1); }
static inline __nv_bfloat16 __float2bfloat16_rd(float f) { return ::kl::detail::f2b(f, 2); }
static inline __nv_bfloat16 __float2bfloat16_ru(float f) { return ::kl::detail::f2b(f, 3); }
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
static inline float __bfloat162float(__nv_bfloat16 b) { return ::kl::detail::bf2f(b.__x); }
static inline __nv_bfloat162 __float2bfloat162_rn(float f) {
    return __nv_bfloat162(__float2bfloat16(f), __float2bfloat16(f));
}
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
    return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(b));
}
static inline __nv_bfloat162 __float22bfloat162_rn(float2 v) { return __floats2bfloat162_rn(v.x, v.y); }
static inline float2 __bfloat1622float2(__nv_bfloat162 h) {
    return make_float2(__bfloat162float(h.x), __bfloat162float(h.y));
}
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 h) { return __nv_bfloat162(h, h); }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
static inline float __low2float(__nv_bfloat162 h) { return __bfloat162float(h.x); }
static inline float __high2float(__nv_bfloat162 h) { return __bfloat162float(h.y); }
static inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
static inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline __nv_bfloat16 __short_as_bfloat16(short v) { return ::kl::detail::mkb((unsigned short)v); }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short v) { return ::kl::detail::mkb(v); }
static inline int __bfloat162int_rn(__nv_bfloat16 h) { return __float2int_rn(__bfloat162float(h)); }
static inline int __bfloat162int_rz(__nv_bfloat16 h) { return __float2int_rz(__bfloat162float(h)); }
static inline __nv_bfloat16 __int2bfloat16_rn(int v) { return __nv_bfloat16(v); }
static inline __half __bfloat162half(__nv_bfloat16 b) { return __float2half(__bfloat162float(b)); }
static inline __nv_bfloat16 __half2bfloat16(__half h) { return __float2bfloat16(__half2float(h)); }

// arithmetic: one correctly rounded operation per call
#define KL_HALF_OPS(H, H2, CVT, OF)                                                           \
    static inline H __hadd(H a, H b) { return OF((double)CVT(a) + (double)CVT(b)); }          \
    static inline H __hsub(H a, H b) { return OF((double)CVT(a) - (double)CVT(b)); }          \
    static inline H __hmul(H a, H b) { return OF((double)CVT(a) * (double)CVT(b)); }          \
    static inline H __hdiv(H a, H b) { return H(CVT(a) / CVT(b)); }                           \
    static inline H __hfma(H a, H b, H c) {                                                   \
        return OF((double)CVT(a) * (double)CVT(b) + (double)CVT(c)); }                        \
    static inline H __hadd_rn(H a, H b) { return __hadd(a, b); }                              \
    static inline H __hsub_rn(H a, H b) { return __hsub(a, b); }                              \
    static inline H __hmul_rn(H a, H b) { return __hmul(a, b); }                              \
    static inline H __hneg(H a) { H r = a; r.__x ^= 0x8000u; return r; }                      \
    static inline H __habs(H a) { H r = a; r.__x &= 0x7fffu; return r; }                      \
    static inline H kl_sat_(H a) { float f = CVT(a); return H(__saturatef(f)); }             \
    static inline H __hadd_sat(H a, H b) { return kl_sat_(__hadd(a, b)); }                    \
    static inline H __hsub_sat(H a, H b) { return kl_sat_(__hsub(a, b)); }                    \
    static inline H __hmul_sat(H a, H b) { return kl_sat_(__hmul(a, b)); }                    \
    static inline H __hfma_sat(H a, H b, H c) { return kl_sat_(__hfma(a, b, c)); }            \
    static inline H __hfma_relu(H a, H b, H c) { H r = __hfma(a, b, c); return CVT(r) < 0.0f ? H(0.0f) : r; } \
    static inline H __hmax(H a, H b) { return H(fmaxf(CVT(a), CVT(b))); }                     \
    static inline H __hmin(H a, H b) { return H(fminf(CVT(a), CVT(b))); }                     \
    static inline H __hmax_nan(H a, H b) { float x = CVT(a), y = CVT(b); return (x != x || y != y) ? H(NAN) : H(fmaxf(x, y)); } \
    static inline H __hmin_nan(H a, H b) { float x = CVT(a), y = CVT(b); return (x != x || y != y) ? H(NAN) : H(fminf(x, y)); } \
    static inline bool __heq(H a, H b) { return CVT(a) == CVT(b); }                           \
    static inline bool __hne(H a, H b) { float x = CVT(a), y = CVT(b); return x == x && y == y && x != y; } \
    static inline bool __hlt(H a, H b) { return CVT(a) < CVT(b); }                            \
    static inline bool __hle(H a, H b) { return CVT(a) <= CVT(b); }                           \
    static inline bool __hgt(H a, H b) { return CVT(a) > CVT(b); }                            \
    static inline bool __hge(H a, H b) { return CVT(a) >= CVT(b); }                           \
    static inline bool __hequ(H a, H b) { return !(CVT(a) < CVT(b) || CVT(a) > CVT(b)); }     \
    static inline bool __hneu(H a, H b) { return !(CVT(a) == CVT(b)); }                       \
    static inline bool __hltu(H a, H b) { return !(CVT(a) >= CVT(b)); }                       \
    static inline bool __hleu(H a, H b) { return !(CVT(a) > CVT(b)); }                        \
    static inline bool __hgtu(H a, H b) { return !(CVT(a) <= CVT(b)); }                       \
    static inline bool __hgeu(H a, H b) { return !(CVT(a) < CVT(b)); }                        \
    static inline bool __hisnan(H a) { float x = CVT(a); return x != x; }                     \
    static inline int __hisinf(H a) { float x = CVT(a); return isinf(x) ? (x > 0 ? 1 : -1) : 0; } \
    static inline H hsqrt(H a) { return H(sqrtf(CVT(a))); }                                   \
    static inline H hrsqrt(H a) { return H(1.0f / sqrtf(CVT(a))); }                           \
    static inline H hrcp(H a) { return H(1.0f / CVT(a)); }                                    \
    static inline H hexp(H a) { return H(expf(CVT(a))); }                                     \
    static inline H hexp2(H a) { return H(exp2f(CVT(a))); }                                   \
    static inline H hexp10(H a) { return H(exp10f(CVT(a))); }                                 \
    static inline H hlog(H a) { return H(logf(CVT(a))); }                                     \
    static inline H hlog2(H a) { return H(log2f(CVT(a))); }                                   \
    static inline H hlog10(H a) { return H(log10f(CVT(a))); }                                 \
    static inline H hsin(H a) { return H(sinf(CVT(a))); }                                     \
    static inline H hcos(H a) { return H(cosf(CVT(a))); }                                     \
    static inline H htanh(H a) { return H(tanhf(CVT(a))); }                                   \
    static inline H hceil(H a) { return H(ceilf(CVT(a))); }                                   \
    static inline H hfloor(H a) { return H(floorf(CVT(a))); }                                 \
    static inline H htrunc(H a) { return H(truncf(CVT(a))); }                                 \
    static inline H hrint(H a) { return H(nearbyintf(CVT(a))); }                              \
    static inline H operator+(const H& a, const H& b) { return __hadd(a, b); }                \
    static inline H operator-(const H& a, const H& b) { return __hsub(a, b); }                \
    static inline H operator*(const H& a, const H& b) { return __hmul(a, b); }                \
    static inline H operator/(const H& a, const H& b) { return __hdiv(a, b); }                \
    static inline H& operator+=(H& a, const H& b) { a = __hadd(a, b); return a; }             \
    static inline H& operator-=(H& a, const H& b) { a = __hsub(a, b); return a; }             \
    static inline H& operator*=(H& a, const H& b) { a = __hmul(a, b); return a; }             \
    static inline H& operator/=(H& a, const H& b) { a = __hdiv(a, b); return a; }             \
    static inline H operator-(const H& a) { return __hneg(a); }                               \
    static inline H operator+(const H& a) { return a; }                                       \
    static inline H& operator++(H& a) { a = __hadd(a, H(1.0f)); return a; }                   \
    static inline H& operator--(H& a) { a = __hsub(a, H(1.0f)); return a; }                   \
    static inline H operator++(H& a, int) { H r = a; ++a; return r; }                        \
    static inline H operator--(H& a, int) { H r = a; --a; return r; }                        \
    static inline bool operator==(const H& a, const H& b) { return __heq(a, b); }             \
    static inline bool operator!=(const H& a, const H& b) { return __hneu(a, b); }            \
    static inline bool operator<(const H& a, const H& b) { return __hlt(a, b); }              \
    static inline bool operator<=(const H& a, const H& b) { return __hle(a, b); }             \
    static inline bool operator>(const H& a, const H& b) { return __hgt(a, b); }              \
    static inline bool operator>=(const H& a, const H& b) { return __hge(a, b); }             \
    static inline H2 __hadd2(H2 a, H2 b) { return H2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }   \
    static inline H2 __hsub2(H2 a, H2 b) { return H2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }   \
    static inline H2 __hmul2(H2 a, H2 b) { return H2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }   \
    static inline H2 __h2div(H2 a, H2 b) { return H2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }   \
    static inline H2 __hfma2(H2 a, H2 b, H2 c) { return H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
    static inline H2 __hadd2_sat(H2 a, H2 b) { return H2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
    static inline H2 __hmul2_sat(H2 a, H2 b) { return H2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
    static inline H2 __hfma2_sat(H2 a, H2 b, H2 c) { return H2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); } \
    static inline H2 __hneg2(H2 a) { return H2(__hneg(a.x), __hneg(a.y)); }                   \
    static inline H2 __habs2(H2 a) { return H2(__habs(a.x), __habs(a.y)); }                   \
    static inline H2 __hmax2(H2 a, H2 b) { return H2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }   \
    static inline H2 __hmin2(H2 a, H2 b) { return H2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }   \
    static inline H2 h2sqrt(H2 a) { return H2(hsqrt(a.x), hsqrt(a.y)); }                      \
    static inline H2 h2exp(H2 a) { return H2(hexp(a.x), hexp(a.y)); }                         \
    static inline H2 h2log(H2 a) { return H2(hlog(a.x), hlog(a.y)); }                         \
    static inline H2 h2rcp(H2 a) { return H2(hrcp(a.x), hrcp(a.y)); }                         \
    static inline H2 h2rsqrt(H2 a) { return H2(hrsqrt(a.x), hrsqrt(a.y)); }                   \
    static inline H2 operator+(const H2& a, const H2& b) { return __hadd2(a, b); }            \
    static inline H2 operator-(const H2& a, const H2& b) { return __hsub2(a, b); }            \
    static inline H2 operator*(const H2& a, const H2& b) { return __hmul2(a, b); }            \
    static inline H2 operator/(const H2& a, const H2& b) { return __h2div(a, b); }            \
    static inline H2& operator+=(H2& a, const H2& b) { a = __hadd2(a, b); return a; }         \
    static inline H2& operator-=(H2& a, const H2& b) { a = __hsub2(a, b); return a; }         \
    static inline H2& operator*=(H2& a, const H2& b) { a = __hmul2(a, b); return a; }         \
    static inline H2& operator/=(H2& a, const H2& b) { a = __h2div(a, b); return a; }         \
    static inline H2 operator-(const H2& a) { return __hneg2(a); }                            \
    static inline bool operator==(const H2& a, const H2& b) { return a.x == b.x && a.y == b.y; } \
    static inline bool operator!=(const H2& a, const H2& b) { return !(a == b); }

KL_HALF_OPS(__half, __half2, __half2float, ::kl::detail::h_of)
KL_HALF_OPS(__nv_bfloat16, __nv_bfloat162, __bfloat162float, ::kl::detail::b_of)
#undef KL_HALF_OPS

static inline __half atomicAdd(__half* p, __half v) {
    unsigned short* u = reinterpret_cast<unsigned short*>(p);
    unsigned short old = __atomic_load_n(u, __ATOMIC_RELAXED), nw;
    do {
        nw = __hadd(__ushort_as_half(old), v).__x;
    } while (!__atomic_compare_exchange_n(u, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return __ushort_as_half(old);
}
static inline __nv_bfloat16 atomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) {
    unsigned short* u = reinterpret_cast<unsigned short*>(p);
    unsigned short old = __atomic_load_n(u, __ATOMIC_RELAXED), nw;
    do {
        nw = __hadd(__ushort_as_bfloat16(old), v).__x;
    } while (!__atomic_compare_exchange_n(u, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return __ushort_as_bfloat16(old);
}
static inline __half2 atomicAdd(__half2* p, __half2 v) {
    unsigned* u = reinterpret_cast<unsigned*>(p);
    unsigned old = __atomic_load_n(u, __ATOMIC_RELAXED), nw;
    __half2 o, n;
    do {
        __builtin_memcpy(&o, &old, 4);
        n = __hadd2(o, v);
        __builtin_memcpy(&nw, &n, 4);
    } while (!__atomic_compare_exchange_n(u, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    __builtin_memcpy(&o, &old, 4);
    return o;
}
static inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
    unsigned* u = reinterpret_cast<unsigned*>(p);
    unsigned old = __atomic_load_n(u, __ATOMIC_RELAXED), nw;
    __nv_bfloat162 o, n;
    do {
        __builtin_memcpy(&o, &old, 4);
        n = __hadd2(o, v);
        __builtin_memcpy(&nw, &n, 4);
    } while (!__atomic_compare_exchange_n(u, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    __builtin_memcpy(&o, &old, 4);
    return o;
}

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)

// ---------------------------------------------------------------- cooperative groups
namespace cooperative_groups {

template <class T> struct plus { T operator()(const T& a, const T& b) const { return a + b; } };
template <class T> struct less { T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(const T& a, const T& b) const { return a & b; } };
template <class T> struct bit_or { T operator()(const T& a, const T& b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(const T& a, const T& b) const { return a ^ b; } };

namespace details {
using ::kl::detail::Fiber;
// reduce / scan over the participating lanes in lane order; MODE 0 reduce,
// 1 inclusive scan, 2 exclusive scan (lane 0's result is its own value, untouched)
template <class T, class Op, int MODE>
static void cg_complete(Fiber* const* lanes, unsigned mask) {
    const Op* op = nullptr;
    for (unsigned l = 0; l < 32; ++l)
        if (mask >> l & 1u) { op = static_cast<const Op*>(lanes[l]->p0); break; }
    bool first = true;
    alignas(T) unsigned char accbuf[sizeof(T)];
    T* acc = reinterpret_cast<T*>(accbuf);
    for (unsigned l = 0; l < 32; ++l) {
        if (!(mask >> l & 1u)) continue;
        T v;
        __builtin_memcpy(&v, lanes[l]->in, sizeof(T));
        if (MODE == 2) {
            if (first) __builtin_memcpy(lanes[l]->out, lanes[l]->in, sizeof(T));
            else __builtin_memcpy(lanes[l]->out, acc, sizeof(T));
        }
        if (first) { new (acc) T(v); first = false; }
        else *acc = (*op)(*acc, v);
        if (MODE == 1) __builtin_memcpy(lanes[l]->out, acc, sizeof(T));
    }
    if (MODE == 0)
        for (unsigned l = 0; l < 32; ++l)
            if (mask >> l & 1u) __builtin_memcpy(lanes[l]->out, acc, sizeof(T));
}
}  // namespace details

class thread_group {
  public:
    unsigned mask_;  // lanes within the warp (tiles); 0 for a whole block
    unsigned size_;
    unsigned rank_;
    void sync(KL_SRC) const {
        if (mask_ == 0) __syncthreads(KL_FWD);
        else __syncwarp(mask_, KL_FWD);
    }
    unsigned long long size() const { return size_; }
    unsigned long long num_threads() const { return size_; }
    unsigned long long thread_rank() const { return rank_; }
};

class thread_block {
  public:
    static void sync(KL_SRC) {
        kl_rt_block_sync(::kl::detail::cur(), KL_FWD, ::kl::detail::BAR_SYNC, 0, "thread_block::sync");
    }
    static void barrier_wait(KL_SRC) { sync(KL_FWD); }
    static unsigned thread_rank() { return ::kl::detail::cur()->linear; }
    static unsigned size() { return ::kl::detail::cur()->nthreads; }
    static unsigned num_threads() { return ::kl::detail::cur()->nthreads; }
    static dim3 group_index() { return dim3(blockIdx); }
    static dim3 thread_index() { return dim3(threadIdx); }
    static dim3 group_dim() { return blockDim; }
    static dim3 dim_threads() { return blockDim; }
    operator thread_group() const { return thread_group{0u, size(), thread_rank()}; }
};
static inline thread_block this_thread_block() { return thread_block(); }

class grid_group {
  public:
    static void sync(KL_SRC) {
        kl_rt_trap(::kl::detail::cur(), ::kl::detail::KL_UNSUPPORTED, KL_FWD,
                   "grid_group::sync (a cooperative launch) is not emulated");
    }
    static unsigned long long thread_rank() {
        ::kl::detail::Fiber* f = ::kl::detail::cur();
        unsigned long long b = f->bid.x + (unsigned long long)f->gdim.x *
                               (f->bid.y + (unsigned long long)f->gdim.y * f->bid.z);
        return b * f->nthreads + f->linear;
    }
    static unsigned long long size() {
        ::kl::detail::Fiber* f = ::kl::detail::cur();
        return (unsigned long long)f->gdim.x * f->gdim.y * f->gdim.z * f->nthreads;
    }
    static unsigned long long num_threads() { return size(); }
    static unsigned long long block_rank() {
        ::kl::detail::Fiber* f = ::kl::detail::cur();
        return f->bid.x + (unsigned long long)f->gdim.x * (f->bid.y + (unsigned long long)f->gdim.y * f->bid.z);
    }
    static unsigned long long num_blocks() {
        ::kl::detail::Fiber* f = ::kl::detail::cur();
        return (unsigned long long)f->gdim.x * f->gdim.y * f->gdim.z;
    }
    static bool is_valid() { return true; }
};
static inline grid_group this_grid() { return grid_group(); }

template <unsigned N>
class thread_block_tile {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0,
                  "the CPU emulator supports thread_block_tile<N> for N a power of two <= 32");

  public:
    static constexpr unsigned num_threads_ = N;
    static unsigned tile_mask() {
        unsigned lane = ::kl::detail::cur()->lane;
        unsigned base = N == 32 ? 0xffffffffu : ((1u << N) - 1u);
        return N == 32 ? base : base << (lane & ~(N - 1u));
    }
    static void sync(KL_SRC) { __syncwarp(tile_mask(), KL_FWD); }
    static unsigned thread_rank() { return ::kl::detail::cur()->linear % N; }
    static unsigned size() { return N; }
    static unsigned num_threads() { return N; }
    static unsigned meta_group_rank() { return ::kl::detail::cur()->linear / N; }
    static unsigned meta_group_size() { return (::kl::detail::cur()->nthreads + N - 1) / N; }
    template <class T>
    static T shfl(T v, int src, KL_SRC) {
        return ::kl::detail::shfl<::kl::detail::W_SHFL>(tile_mask(), v, src, N, KL_FWD, "tile.shfl");
    }
    template <class T>
    static T shfl_down(T v, unsigned d, KL_SRC) {
        return ::kl::detail::shfl<::kl::detail::W_SHFL_DOWN>(tile_mask(), v, d, N, KL_FWD, "tile.shfl_down");
    }
    template <class T>
    static T shfl_up(T v, unsigned d, KL_SRC) {
        return ::kl::detail::shfl<::kl::detail::W_SHFL_UP>(tile_mask(), v, d, N, KL_FWD, "tile.shfl_up");
    }
    template <class T>
    static T shfl_xor(T v, unsigned m, KL_SRC) {
        return ::kl::detail::shfl<::kl::detail::W_SHFL_XOR>(tile_mask(), v, m, N, KL_FWD, "tile.shfl_xor");
    }
    static int any(int p, KL_SRC) {
        return (int)::kl::detail::vote<::kl::detail::W_ANY>(tile_mask(), p, KL_FWD, "tile.any");
    }
    static int all(int p, KL_SRC) {
        return (int)::kl::detail::vote<::kl::detail::W_ALL>(tile_mask(), p, KL_FWD, "tile.all");
    }
    static unsigned ballot(int p, KL_SRC) {
        unsigned b = ::kl::detail::vote<::kl::detail::W_BALLOT>(tile_mask(), p, KL_FWD, "tile.ballot");
        return N == 32 ? b : (b >> (::kl::detail::cur()->lane & ~(N - 1u))) & ((1u << N) - 1u);
    }
    template <class T>
    static unsigned match_any(T v, KL_SRC) {
        unsigned m = __match_any_sync(tile_mask(), v, KL_FWD);
        return N == 32 ? m : (m >> (::kl::detail::cur()->lane & ~(N - 1u))) & ((1u << N) - 1u);
    }
    operator thread_group() const { return thread_group{tile_mask(), N, thread_rank()}; }
};
template <unsigned N>
using thread_block_tile_base = thread_block_tile<N>;

template <unsigned N, class Parent>
static inline thread_block_tile<N> tiled_partition(const Parent&) { return thread_block_tile<N>(); }

static inline thread_group tiled_partition(const thread_group& parent, unsigned n) {
    (void)parent;
    unsigned lane = ::kl::detail::cur()->lane;
    unsigned mask = n >= 32 ? 0xffffffffu : (((1u << n) - 1u) << (lane & ~(n - 1u)));
    return thread_group{mask, n, ::kl::detail::cur()->linear % n};
}
static inline thread_group tiled_partition(const thread_block& b, unsigned n) {
    return tiled_partition(thread_group(b), n);
}

// coalesced_threads(): the lanes that reach the call together (see __activemask)
class coalesced_group {
  public:
    unsigned mask_;
    unsigned size() const { return (unsigned)__popc(mask_); }
    unsigned num_threads() const { return size(); }
    unsigned thread_rank() const {
        return (unsigned)__popc(mask_ & ((1u << ::kl::detail::cur()->lane) - 1u));
    }
    void sync(KL_SRC) const { __syncwarp(mask_, KL_FWD); }
    unsigned lane_of(int rank) const {
        unsigned m = mask_;
        for (int i = 0; i < rank && m; ++i) m &= m - 1u;
        return m ? (unsigned)__builtin_ctz(m) : 0u;
    }
    template <class T>
    T shfl(T v, int rank, KL_SRC) const {
        return ::kl::detail::shfl<::kl::detail::W_SHFL>(mask_, v, lane_of(rank), 32, KL_FWD, "coalesced.shfl");
    }
    int any(int p, KL_SRC) const { return __any_sync(mask_, p, KL_FWD); }
    int all(int p, KL_SRC) const { return __all_sync(mask_, p, KL_FWD); }
    unsigned ballot(int p, KL_SRC) const { return __ballot_sync(mask_, p, KL_FWD); }
    unsigned meta_group_rank() const { return 0; }
    unsigned meta_group_size() const { return 1; }
};
static inline coalesced_group coalesced_threads(KL_SRC) {
    return coalesced_group{__activemask(KL_FWD)};
}

namespace details {
template <unsigned N> static inline unsigned group_mask(const thread_block_tile<N>&) {
    return thread_block_tile<N>::tile_mask();
}
static inline unsigned group_mask(const coalesced_group& g) { return g.mask_; }
static inline unsigned group_mask(const thread_group& g) { return g.mask_; }
template <int MODE, class G, class T, class Op>
static inline T collective(const G& g, const T& v, const Op& op, int line, const char* file, const char* what) {
    static_assert(std::is_trivially_copyable<T>::value, "");
    ::kl::detail::Fiber* f = ::kl::detail::cur();
    ::kl::detail::put_in(f, v);
    f->p0 = &op;
    unsigned mask = group_mask(g);
    if (mask == 0)
        kl_rt_trap(f, ::kl::detail::KL_UNSUPPORTED, line, file, "cooperative_groups collective over a whole block");
    kl_rt_warp(f, ::kl::detail::W_CG, mask, line, file, &cg_complete<T, Op, MODE>, what);
    return ::kl::detail::get_out<T>(f);
}
}  // namespace details

template <class G, class T, class Op>
static inline T reduce(const G& g, T v, Op op, KL_SRC) {
    return details::collective<0>(g, v, op, KL_FWD, "cooperative_groups::reduce");
}
template <class G, class T, class Op>
static inline T inclusive_scan(const G& g, T v, Op op, KL_SRC) {
    return details::collective<1>(g, v, op, KL_FWD, "cooperative_groups::inclusive_scan");
}
template <class G, class T>
static inline T inclusive_scan(const G& g, T v, KL_SRC) {
    return details::collective<1>(g, v, plus<T>(), KL_FWD, "cooperative_groups::inclusive_scan");
}
template <class G, class T, class Op>
static inline T exclusive_scan(const G& g, T v, Op op, KL_SRC) {
    return details::collective<2>(g, v, op, KL_FWD, "cooperative_groups::exclusive_scan");
}
template <class G, class T>
static inline T exclusive_scan(const G& g, T v, KL_SRC) {
    T r = details::collective<2>(g, v, plus<T>(), KL_FWD, "cooperative_groups::exclusive_scan");
    return g.thread_rank() == 0 ? T(0) : r;
}
template <class G>
static inline void sync(const G& g, KL_SRC) { g.sync(KL_FWD); }
static inline void sync(const thread_block&, KL_SRC) {
    thread_block::sync(KL_FWD);
}

}  // namespace cooperative_groups

// libcu++: <cuda/std/X> is mapped to <X>
namespace cuda {
namespace std {
using namespace ::std;
}
}  // namespace cuda

// ------------------------------------------------------ kernel entry (translator)
namespace kl {
namespace detail {

template <class T>
static inline void describe_one(char* out, size_t cap) {
    using D = typename std::decay<T>::type;
    if constexpr (std::is_pointer<D>::value) {
        snprintf(out, cap, "p");
    } else if constexpr (std::is_same<D, bool>::value) {
        snprintf(out, cap, "b1");
    } else if constexpr (std::is_same<D, __half>::value) {
        snprintf(out, cap, "h2");
    } else if constexpr (std::is_same<D, __nv_bfloat16>::value) {
        snprintf(out, cap, "e2");
    } else if constexpr (std::is_enum<D>::value) {
        describe_one<typename std::underlying_type<D>::type>(out, cap);
    } else if constexpr (std::is_floating_point<D>::value) {
        snprintf(out, cap, "f%zu", sizeof(D));
    } else if constexpr (std::is_integral<D>::value) {
        snprintf(out, cap, "%c%zu", std::is_signed<D>::value ? 'i' : 'u', sizeof(D));
    } else {
        snprintf(out, cap, "s%zu:%zu", sizeof(D), alignof(D));
    }
}

template <class... A>
static inline const char* param_desc(void (*)(A...)) {
    static char buf[4096];
    buf[0] = 0;
    size_t n = 0;
    char one[64];
    int k = 0;
    ((describe_one<A>(one, sizeof one),
      n += (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, "%s%s", k++ ? "," : "", one)),
     ...);
    (void)k;
    return buf;
}
static inline const char* param_desc(void (*)()) { return ""; }

template <class... A, size_t... I>
static inline void invoke_impl(void (*f)(A...), void** a, std::index_sequence<I...>) {
    f(*static_cast<typename std::decay<A>::type*>(a[I])...);
}
template <class... A>
static inline void invoke(void (*f)(A...), void** a) {
    invoke_impl(f, a, std::index_sequence_for<A...>{});
}

}  // namespace detail
}  // namespace kl

#endif  // KL_CUDA_RUNTIME_H
