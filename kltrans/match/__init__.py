"""Anchors: code patterns with metavariables, context clauses and constraints.

See :mod:`kltrans.match.pattern` (the pattern language) and :mod:`kltrans.match.rule`
(rules as data: pattern/kind/query plus inside, not-inside, has, follows, precedes and
per-metavariable constraints).
"""

from kltrans.match.pattern import Match, Pattern, PatternError
from kltrans.match.rule import Constraint, Rule, RuleError

__all__ = ["Constraint", "Match", "Pattern", "PatternError", "Rule", "RuleError"]
