"""The kltrans pass catalogue: one module per pass pair, authored by hand.

``CATALOGUE`` is the registry table (CONVENTIONS.md rule 3): pass name -> "module:Class",
imported only when the pass is used. It is published through the entry point
``kltrans.passes`` (setup.cfg); ``kltrans new-pass`` adds lines to it.
"""

CATALOGUE = {
    "restrict-pointers": "passes.restrict_pointers:RestrictPointers",
    "reroll": "passes.unroll:Reroll",
    "unrestrict-pointers": "passes.restrict_pointers:UnrestrictPointers",
    "unroll": "passes.unroll:Unroll",
}
