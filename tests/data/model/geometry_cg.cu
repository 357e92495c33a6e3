// Thread geometry through cooperative groups: ranks, indices and sizes of the block, the
// grid and tiles, under a namespace alias. Marks as in geometry_builtin.cu.
#include <cooperative_groups.h>
namespace cgx = cooperative_groups;

// the lane from the special register, as some code bases spell it
__device__ __forceinline__ unsigned __lane_id()
{
    unsigned id;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
    return id;
}

__device__ int scaled_lane(int t)
{
    int l = t % 32;  // role: none: a device function's parameter comes from the caller
    return l * 2;
}

__global__ void cg_ranks(const float* src, float* dst, int n)
{
    cgx::thread_block cta = cgx::this_thread_block();
    cgx::thread_block_tile<32> warp = cgx::tiled_partition<32>(cta);
    auto quarter = cgx::tiled_partition<8>(cta);
    cgx::grid_group whole = cgx::this_grid();

    unsigned r = cta.thread_rank();  // role: thread linear
    unsigned r2 = cgx::this_thread_block().thread_rank();  // role: thread linear
    unsigned tx = cta.thread_index().x;  // role: thread x
    unsigned ty = cta.thread_index().y;  // role: thread y
    unsigned bx = cta.group_index().x;  // role: block x
    unsigned bdx = cta.dim_threads().x;  // role: block-size x
    unsigned nb = cta.size();  // role: block-size linear
    unsigned nb2 = cta.num_threads();  // role: block-size linear
    unsigned long long gr = whole.thread_rank();  // role: global linear
    unsigned long long gr2 = cgx::this_grid().thread_rank();  // role: global linear
    unsigned long long gsz = whole.size();  // role: grid-size linear
    unsigned long long gsz2 = cgx::this_grid().num_threads();  // role: grid-size linear
    unsigned ln = warp.thread_rank();  // role: lane linear 32
    unsigned wi = warp.meta_group_rank();  // role: warp linear 32
    unsigned ws = warp.size();  // role: warp-size linear 32
    unsigned q = quarter.thread_rank();  // role: lane linear 8
    unsigned qi = quarter.meta_group_rank();  // role: warp linear 8
    unsigned hw = __lane_id();  // role: lane linear 32
    unsigned flat = bx * nb + r;  // role: global linear
    unsigned flat2 = cta.group_index().x * cta.size() + cta.thread_rank();  // role: global linear
    unsigned gx = blockIdx.x * cta.dim_threads().x + cta.thread_index().x;  // role: global x
    unsigned wlane = r % 32;  // role: lane linear 32 mod 32
    unsigned rowof = flat / n;  // role: global linear div n
    float v = src[r];  // role: none: data loaded per thread
    int back = scaled_lane(threadIdx.x);  // role: none: a call's result
    if (gr < (unsigned long long)n)
        dst[gr] = v + r2 + tx + ty + bdx + nb2 + gr2 + gsz + gsz2 + ln + wi + ws + q + qi + hw +
                  flat2 + gx + wlane + rowof + back;
}
