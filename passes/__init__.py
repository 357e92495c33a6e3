"""The kltrans pass catalogue: one module per pass pair, authored by hand.

``CATALOGUE`` is the registry table (CONVENTIONS.md rule 3): pass name -> "module:Class",
imported only when the pass is used. It is published through the entry point
``kltrans.passes`` (setup.cfg); ``kltrans new-pass`` adds lines to it.
"""

CATALOGUE = {
    "add-launch-bounds": "passes.launch_bounds:AddLaunchBounds",
    "coarsen": "passes.coarsen:Coarsen",
    "drop-launch-bounds": "passes.launch_bounds:DropLaunchBounds",
    "fast-math": "passes.fast_math:FastMath",
    "grid-stride": "passes.grid_stride:GridStride",
    "hoist-invariant": "passes.hoist_invariant:HoistInvariant",
    "one-per-thread": "passes.grid_stride:OnePerThread",
    "precise-math": "passes.fast_math:PreciseMath",
    "reroll": "passes.unroll:Reroll",
    "restrict-pointers": "passes.restrict_pointers:RestrictPointers",
    "scalarize-access": "passes.vectorize_access:ScalarizeAccess",
    "sink-invariant": "passes.hoist_invariant:SinkInvariant",
    "uncoarsen": "passes.coarsen:Uncoarsen",
    "unrestrict-pointers": "passes.restrict_pointers:UnrestrictPointers",
    "unroll": "passes.unroll:Unroll",
    "vectorize-access": "passes.vectorize_access:VectorizeAccess",
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
