"""The engine's rewrite toolkit (kltrans.passes.rewrite): whole-line removal, lines
inserted at a statement's indentation, braces around a body, fresh names, templates
indented by the engine."""

from __future__ import annotations

from kltrans.passes.rewrite import (alone_on_line, brace, fresh_name, indent_of,
                                    insert_lines_before, remove, remove_node, render)
from kltrans.syntax import apply_edits, parse

SRC = """__global__ void k(float* y, int n) {
    int i = threadIdx.x;
    #pragma unroll 4
    for (int j = 0; j < n; j++) y[i] += 1.f;
    if (i < n) { y[i] = 0.f; } int t = 2;
    while (i < n)
        i += t;
}
"""


def _unit():
    return parse(SRC, "k.cu")


def _first(unit, kind):
    return unit.nodes_of_type(kind)[0]


def test_remove_takes_the_whole_line_only_when_the_node_stands_alone():
    u = _unit()
    pr = u.pragmas[0]
    assert alone_on_line(u, pr.start, pr.end)
    out = apply_edits(u, [remove(u, pr.start, pr.end)]).source.decode()
    assert "#pragma" not in out and "    int i = threadIdx.x;\n    for" in out
    decl = [d for d in u.nodes_of_type("declaration") if u.text(d) == "int t = 2;"][0]
    out = apply_edits(u, [remove_node(u, decl)]).source.decode()
    assert "if (i < n) { y[i] = 0.f; } \n" in out  # not alone: the text only


def test_lines_are_inserted_at_the_statements_indentation():
    u = _unit()
    loop = _first(u, "while_statement")
    out = apply_edits(u, [insert_lines_before(u, loop, "// two\nint z = 0;")]).source.decode()
    assert "    // two\n    int z = 0;\n    while (i < n)" in out
    assert indent_of(u, loop.start_byte) == "    "


def test_brace_keeps_a_one_line_body_on_its_line_and_closes_a_long_one_below():
    u = _unit()
    fl = _first(u, "for_statement")
    wl = _first(u, "while_statement")
    edits = brace(u, fl.child_by_field_name("body")) + brace(u, wl.child_by_field_name("body"))
    out = apply_edits(u, edits).source.decode()
    assert "j++) { y[i] += 1.f; }" in out
    assert "while (i < n) {\n        i += t;\n    }\n" in out


def test_a_fresh_name_is_used_nowhere_in_its_scope():
    u = _unit()
    fn = _first(u, "function_definition")
    assert fresh_name(u, fn) == "u"  # i, j, k are taken (k is the kernel's name)
    assert fresh_name(u, fn, ("t", "acc")) == "acc"
    assert fresh_name(u, fn, taken=("u", "v", "w", "ii", "jj")) == "r0"


def test_a_template_is_indented_by_the_engine():
    text = render("for (int {{ v }} = 0; {{ v }} < {{ n }}; {{ v }}++) {\n"
                  "  acc += x[{{ v }}];\n"
                  "}", "    ", v="q", n="len")
    assert text == ("for (int q = 0; q < len; q++) {\n"
                    "      acc += x[q];\n"
                    "    }")


def test_token_text_is_the_same_for_spellings_that_differ_in_blanks_and_comments():
    from kltrans.passes.rewrite import lex, token_text

    a = "s <<= 1;  // halve\n  acc +=x[i] ; i++;"
    b = "s<<=1; /* halve */ acc += x[ i ];i ++ ;"
    assert token_text(a) == token_text(b) == "s <<= 1 ; acc += x [ i ] ; i ++ ;"
    assert lex('printf("a b"); # define N 4') == ['printf', '(', '"a b"', ')', ';',
                                                  '# define', 'N', '4']
    assert token_text("a - -b") != token_text("a -- b")  # operators are not merged across blanks


DEAD = """union Pair { float2 v; float s[2]; };

__device__ float twice(float a) { return 2.f * a; }

__device__ Pair load_pair(const float* x, int i) { Pair p; p.v = ((const float2*)x)[i]; return p; }

__global__ void k(const float* x, float* y, int n) {
    const int already_dead = 7;
    const int half = n / 2;
    int i = threadIdx.x;
    if (i < half) { Pair p = load_pair(x, i); y[i] = twice(p.s[0]); }
}
"""


def test_dead_code_helpers_remove_only_what_the_rewrite_leaves_dead():
    from kltrans.passes.rewrite import dead_declarations, drop_unused_definitions
    from kltrans.syntax.cuda import find_functions

    unit = parse(DEAD, "k.cu")
    fn = next(f for f in find_functions(unit) if f.is_kernel)
    stmt = unit.nodes_of_type("if_statement")[0]
    gone = [(stmt.start_byte, stmt.end_byte)]
    dead = dead_declarations(unit, fn, gone, keep={"i"})
    # ruleid: half was read only by the removed statement
    # ok: already_dead was dead before the rewrite, not the rewrite's to remove
    assert [unit.text(d) for d in dead] == ["const int half = n / 2;"]
    gone += [(d.start_byte, d.end_byte) for d in dead]
    # the union and load_pair go; twice stays when the new code calls it (keep)
    edits = [remove_node(unit, stmt)] + [remove_node(unit, d) for d in dead]
    out = apply_edits(unit, edits + drop_unused_definitions(unit, gone, keep={"twice"}))
    out = out.source.decode()
    assert "union Pair" not in out and "load_pair" not in out
    assert "__device__ float twice" in out and "\n\n\n" not in out


CONSTS = """// kltrans: launch k grid=ceil_div(n, kBlock) block=kBlock
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
constexpr int kBlock = 128;
constexpr int kStep = 4;
__global__ void k(float* y, int n) {
    cg::thread_block block = cg::this_thread_block();
    int t = block.thread_rank();
    if (t < n) y[t * kStep] = 0.f;
    y[0] = 1.f;
}
"""


def test_constexprs_and_group_ranks_left_dead_go_but_a_launch_header_keeps_its_names():
    from kltrans.passes.rewrite import dead_declarations, drop_unused_definitions, no_effect
    from kltrans.syntax.cuda import find_functions

    unit = parse(CONSTS, "k.cu")
    fn = next(f for f in find_functions(unit) if f.is_kernel)
    stmt = unit.nodes_of_type("if_statement")[0]
    gone = [(stmt.start_byte, stmt.end_byte)]
    # a group's rank is read, not computed with an effect
    rank = unit.nodes_of_type("init_declarator")[-1].child_by_field_name("value")
    assert unit.text(rank) == "block.thread_rank()" and no_effect(unit, rank)
    dead = dead_declarations(unit, fn, gone, keep=set())
    # ruleid: t was read only by the removed statement; block only by t
    assert sorted(unit.text(d).split("=")[0].strip() for d in dead) == \
        ["cg::thread_block block", "int t"]
    gone += [(d.start_byte, d.end_byte) for d in dead]
    out = apply_edits(unit, drop_unused_definitions(unit, gone)).source.decode()
    # ruleid: kStep was read only by the removed statement
    assert "constexpr int kStep" not in out
    # ok: kBlock is read by the launch header, a comment to the parser
    assert "constexpr int kBlock = 128;" in out


def test_made_dead_removes_what_only_the_rewritten_code_read():
    from kltrans.passes.rewrite import made_dead

    old = parse("__global__ void k(const float* x, float* y, int n) {\n"
                "    const int n4 = n / 4;\n"
                "    const int half = n4 / 2;\n"
                "    const float4* x4 = reinterpret_cast<const float4*>(x);\n"
                "    int unused = 3;\n"
                "    if (n % 4 == 0) { for (int i = 0; i < half; ++i) y[i] = x4[i].x; }\n"
                "    else { y[0] = x[0]; }\n}\n", "k.cu")
    new = parse(old.source.decode().replace(
        "if (n % 4 == 0) { for (int i = 0; i < half; ++i) y[i] = x4[i].x; }\n    else { y[0] = x[0]; }",
        "y[0] = x[0];"), "k.cu")
    once = apply_edits(new, made_dead(old, new)).source.decode()
    # x4 and half go; n4, still read by half's initializer in `new`, on the next round;
    # `unused` was dead before the rewrite and stays
    assert "x4" not in once and "half" not in once and "n4" in once
    twice = apply_edits(parse(once, "k.cu"), made_dead(old, parse(once, "k.cu"))).source.decode()
    assert "n4" not in twice and "int unused = 3;" in twice and "y[0] = x[0];" in twice
