"""Forward optimization: materialize skill cards on a new kernel under a gate budget.

``menu`` builds the offers (card, site, option domains) from the kernel and the skill
library; a filler (``fillers.BuiltinFiller`` or ``llm.LLMFiller``) picks one offer and its
option values; ``search`` gates the pick and keeps it only when it is correct (and, on a
GPU, faster). Fillers choose parameters from a menu; they never write code.
"""
