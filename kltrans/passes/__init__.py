"""The pass framework: base class, options, preconditions, registry, pipelines, manager.

The catalogue of passes lives in the top-level ``passes/`` package and is found through
the registry (entry-point group ``kltrans.passes``); nothing here imports it by name.
"""

from kltrans.passes.base import Pass, PassDefinitionError, Site
from kltrans.passes.facts import CATEGORIES, Context, Fact, Precondition
from kltrans.passes.options import Bool, Choice, Domain, DomainError, Identifier, IntRange, NameList, OneOf, option

__all__ = [
    "Bool", "CATEGORIES", "Choice", "Context", "Domain", "DomainError", "Fact", "Identifier",
    "IntRange", "NameList", "OneOf", "Pass", "PassDefinitionError", "Precondition", "Site", "option",
]
