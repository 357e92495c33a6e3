"""Anchor patterns, rules, context clauses and constraints."""

import pytest

from kltrans.match import Constraint, Pattern, PatternError, Rule, RuleError
from kltrans.syntax import parse

SRC = """\
#define BLOCK 256
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__global__ void k(const float* x, float* y, float* z, int n) {
  __shared__ float s[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  /* a comment between tokens */ y[i] = x[i] + x[i];
  z[i] = x[i] + y[ i ];
  s[threadIdx.x] = x[i];
  __syncthreads();
  for (int k2 = 0; k2 < 4; ++k2) { z[i] += s[k2]; }
  atomicAdd(&z[0], 1.0f);
  atomicAdd(&z[1], y[0], 3);
}
void host(float* x) { int i = 0; x[i] = 1; }
"""
U = parse(SRC, "m.cu")


def texts(matches, name):
    return [m.text(name) for m in matches]


def test_expression_pattern_binds_metavariables():
    ms = Pattern.compile("$A[$I] = $V").find_all(U)
    assert texts(ms, "A") == ["y", "z", "s", "x"]
    assert texts(ms, "I")[:3] == ["i", "i", "threadIdx.x"]


def test_repeated_metavariable_must_bind_equal_subtrees():
    ms = Pattern.compile("$X + $X").find_all(U)
    assert [m.unit.text(m.node) for m in ms] == ["x[i] + x[i]"]


def test_whitespace_and_comments_do_not_matter():
    ms = Pattern.compile("x[i]+y[i]").find_all(U)
    assert len(ms) == 1 and ms[0].unit.text(ms[0].node) == "x[i] + y[ i ]"


def test_multi_metavariable_matches_zero_or_more():
    ms = Pattern.compile("atomicAdd($$$ARGS)").find_all(U)
    assert texts(ms, "ARGS") == ["&z[0], 1.0f", "&z[1], y[0], 3"]
    ms = Pattern.compile("atomicAdd($P, $$$REST)").find_all(U)
    assert texts(ms, "REST") == ["1.0f", "y[0], 3"]
    ms = Pattern.compile("__syncthreads($$$A)").find_all(U)
    assert len(ms) == 1 and ms[0].text("A") == ""


def test_wildcard_is_not_bound():
    ms = Pattern.compile("$_[$_] = $_").find_all(U)
    assert len(ms) == 4 and all(m.bindings == {} for m in ms)


def test_statement_patterns_and_statement_metavariable():
    p = Pattern.compile("for (int $I = $S; $I < $N; ++$I) $BODY;")
    assert p.context == "statement" and p.root_type == "for_statement"
    [m] = p.find_all(U)
    assert (m.text("I"), m.text("S"), m.text("N")) == ("k2", "0", "4")
    assert m.text("BODY") == "{ z[i] += s[k2]; }"


def test_pattern_errors_at_load_time():
    with pytest.raises(PatternError, match="does not parse"):
        Pattern.compile("for (int i = 0; i < ; ")
    with pytest.raises(PatternError, match="empty"):
        Pattern.compile("   ")
    with pytest.raises(PatternError, match="both as"):
        Pattern.compile("f($X, $$$X)")


def test_inside_kernel_and_not_inside():
    r = Rule(pattern="$A[$I] = $V", inside_kernel=True)
    assert texts(r.find_all(U), "A") == ["y", "z", "s"]
    r = Rule(pattern="$A[$I] = $V", not_inside=Rule(kind="function_definition",
                                                       regex=r"__global__"))
    assert texts(r.find_all(U), "A") == ["x"]


def test_inside_binds_for_later_clauses():
    r = Rule(kind="assignment_expression",
             inside=Rule(pattern="for (int $I = $S; $I < $N; ++$I) $BODY;"))
    [m] = r.find_all(U)
    assert m.text("I") == "k2" and U.text(m.node) == "z[i] += s[k2]"


def test_has_and_not_has():
    loops = Rule(kind="for_statement", has=Rule(pattern="__shfl_down_sync($$$A)"))
    [m] = loops.find_all(U)
    assert U.line_col(m.node.start_byte)[0] == 3
    loops = Rule(kind="for_statement", not_has=Rule(pattern="__shfl_down_sync($$$A)"))
    assert [U.line_col(m.node.start_byte)[0] for m in loops.find_all(U)] == [13]


def test_follows_and_precedes():
    after_barrier = Rule(kind="for_statement", follows=Rule(pattern="__syncthreads();"))
    assert len(after_barrier.find_all(U)) == 1
    before_barrier = Rule(kind="expression_statement",
                          precedes=Rule(pattern="__syncthreads();"),
                          has=Rule(pattern="s[$I] = $V"))
    [m] = before_barrier.find_all(U)
    assert m.text("I") == "threadIdx.x"


def test_constraints():
    r = Rule(pattern="$A[$I] = $V", constraints={"I": {"regex": r"^threadIdx"}})
    assert texts(r.find_all(U), "A") == ["s"]
    r = Rule(pattern="atomicAdd(&$A[$I], $$$R)", constraints={"I": {"predicate": "int-literal"}})
    assert texts(r.find_all(U), "I") == ["0", "1"]
    r = Rule(pattern="$A[$I] = $V", constraints={"V": Constraint(kind="binary_expression")})
    assert texts(r.find_all(U), "A") == ["y", "z"]


def test_rule_errors_at_load_time():
    with pytest.raises(RuleError, match="unknown rule key"):
        Rule.from_dict({"patern": "x"})
    with pytest.raises(RuleError, match="unknown predicate"):
        Rule(pattern="$A[$I]", constraints={"I": {"predicate": "nope"}})
    with pytest.raises(RuleError, match="not in the rule"):
        Rule(pattern="$A[$I]", constraints={"Z": {"regex": "x"}})
    with pytest.raises(RuleError, match="bad regex"):
        Rule(pattern="$A[$I]", constraints={"I": {"regex": "("}})
    with pytest.raises(RuleError, match="unknown node kind"):
        Rule(kind="for_loop")
    with pytest.raises(RuleError, match="needs at least one"):
        Rule()


def test_rules_as_data():
    r = Rule.from_dict({"pattern": "$A[$I] = $V", "inside-kernel": True,
                        "not": {"pattern": "s[$J] = $W"},
                        "constraints": {"$I": {"regex": "^i$"}}})
    assert texts(r.find_all(U), "A") == ["y", "z"]


def test_raw_query_anchor(tmp_path):
    r = Rule(query="(call_expression function: (identifier) @f (#eq? @f \"__syncthreads\")) @call",
             capture="call")
    [m] = r.find_all(U)
    assert U.text(m.node) == "__syncthreads()"
    with pytest.raises(RuleError, match="no capture"):
        Rule(query="(call_expression) @c", capture="nope")
    with pytest.raises(RuleError, match="bad tree-sitter query"):
        Rule(query="(call_expression @c")


def test_query_file_from_grammars():
    r = Rule(query="unroll_candidates", capture="loop")
    got = r.find_all(U)
    assert [U.line_col(m.node.start_byte)[0] for m in got] == [3, 13]
