"""The kltrans pass catalogue: one module per pass pair, authored by hand.

``CATALOGUE`` is the registry table (CONVENTIONS.md rule 3): pass name -> "module:Class",
imported only when the pass is used. It is published through the entry point
``kltrans.passes`` (setup.cfg); ``kltrans new-pass`` adds lines to it.
"""

CATALOGUE = {
    "add-launch-bounds": "passes.launch_bounds:AddLaunchBounds",
    "atomic-per-thread": "passes.block_reduce_atomic:AtomicPerThread",
    "block-reduce-atomic": "passes.block_reduce_atomic:BlockReduceAtomic",
    "coalesce-remap": "passes.coalesce_remap:CoalesceRemap",
    "coarsen": "passes.coarsen:Coarsen",
    "cp-async": "passes.cp_async:CpAsync",
    "double-buffer": "passes.double_buffer:DoubleBuffer",
    "drop-launch-bounds": "passes.launch_bounds:DropLaunchBounds",
    "drop-stream-hints": "passes.stream_hints:DropStreamHints",
    "fast-math": "passes.fast_math:FastMath",
    "global-atomics": "passes.privatize_atomics:GlobalAtomics",
    "grid-stride": "passes.grid_stride:GridStride",
    "hoist-invariant": "passes.hoist_invariant:HoistInvariant",
    "one-per-thread": "passes.grid_stride:OnePerThread",
    "online-softmax": "passes.online_softmax:OnlineSoftmax",
    "pad-smem": "passes.pad_smem:PadSmem",
    "per-lane-atomics": "passes.warp_aggregate_atomics:PerLaneAtomics",
    "precise-math": "passes.fast_math:PreciseMath",
    "privatize-atomics": "passes.privatize_atomics:PrivatizeAtomics",
    "reduce-after-load": "passes.reduce_during_load:ReduceAfterLoad",
    "reduce-during-load": "passes.reduce_during_load:ReduceDuringLoad",
    "register-block": "passes.register_block:RegisterBlock",
    "reroll": "passes.unroll:Reroll",
    "restrict-pointers": "passes.restrict_pointers:RestrictPointers",
    "row-per-thread": "passes.row_per_warp:RowPerThread",
    "row-per-warp": "passes.row_per_warp:RowPerWarp",
    "scalarize-access": "passes.vectorize_access:ScalarizeAccess",
    "single-buffer": "passes.double_buffer:SingleBuffer",
    "sink-invariant": "passes.hoist_invariant:SinkInvariant",
    "smem-reduce": "passes.warp_reduce:SmemReduce",
    "stream-hints": "passes.stream_hints:StreamHints",
    "sync-copy": "passes.cp_async:SyncCopy",
    "tile-smem": "passes.tile_smem:TileSmem",
    "two-pass-softmax": "passes.online_softmax:TwoPassSoftmax",
    "uncoalesce-remap": "passes.coalesce_remap:UncoalesceRemap",
    "uncoarsen": "passes.coarsen:Uncoarsen",
    "unpad-smem": "passes.pad_smem:UnpadSmem",
    "unregister-block": "passes.register_block:UnregisterBlock",
    "unrestrict-pointers": "passes.restrict_pointers:UnrestrictPointers",
    "unroll": "passes.unroll:Unroll",
    "untile-smem": "passes.tile_smem:UntileSmem",
    "vectorize-access": "passes.vectorize_access:VectorizeAccess",
    "warp-aggregate-atomics": "passes.warp_aggregate_atomics:WarpAggregateAtomics",
    "warp-reduce": "passes.warp_reduce:WarpReduce",
}

# The order in which a backward walk without a GPU peels mechanisms (kltrans lineage):
# annotations and hints first, then pipelining, register and shared-memory structure,
# then the reductions and work distribution, loop shape last. Passes not listed come
# after these, by name.
WALK_ORDER = [
    "drop-stream-hints", "drop-launch-bounds", "unrestrict-pointers", "precise-math",
    "sync-copy", "single-buffer", "unregister-block", "unpad-smem", "untile-smem",
    "two-pass-softmax", "per-lane-atomics", "global-atomics", "atomic-per-thread",
    "smem-reduce", "reduce-after-load", "row-per-thread", "scalarize-access",
    "uncoalesce-remap", "uncoarsen", "one-per-thread", "sink-invariant", "reroll",
]
