"""Bad input to ``kltrans lineage`` and ``kltrans skills``: a saved lineage or skill card
that cannot be read, or is not of the expected shape, is an error naming the file (exit
2; ``skills validate`` lists card problems with exit 1), never a traceback, and the file
is left as it was: a user's walk is neither resumed from a guess nor thrown away.

None of these runs the gate: the lineage is read before any gate work (a test that
regresses to the old behaviour, a silent new walk, gates and fails on its exit code).
"""

import os
import shutil

import pytest

from kltrans.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RS = os.path.join(ROOT, "corpus", "reduce-sum")
RS_LINEAGE = os.path.join(RS, "lineage-cpu")
SKILLS = os.path.join(ROOT, "skills")

# a lineage of the real shape, cut short as an interrupted copy would leave it
TRUNCATED = open(os.path.join(RS_LINEAGE, "lineage.json"), "rb").read()[:300]


def _walk_args(out):
    return ["lineage", RS, "--backend", "cpu", "--size-limit", "5000", "--probes", "0",
            "--max-steps", "0", "--out", str(out), "--quiet"]


def _tree(d):
    """Every file under ``d``, with its bytes."""
    return {os.path.relpath(os.path.join(r, f), d): open(os.path.join(r, f), "rb").read()
            for r, _, fs in os.walk(d) for f in fs}


def _no_traceback(err):
    assert "Traceback" not in err and "Error:" not in err.replace("error:", ""), err


# ------------------------------------------------------------------ unreadable lineage.json
@pytest.mark.parametrize("content, where", [
    (TRUNCATED, ":16:4: error: not a kltrans lineage: not valid JSON"),
    (b"", "lineage.json: error: not a kltrans lineage: the file is empty"),
    (b"\n  \n", "lineage.json: error: not a kltrans lineage: the file is empty"),
    (b'{"config": "\xff"}', "lineage.json:1:13: error: not a kltrans lineage: not UTF-8"),
], ids=["truncated", "empty", "blank", "not-utf8"])
def test_an_unreadable_lineage_is_an_error_not_a_new_walk(tmp_path, capsys, content, where):
    out = tmp_path / "L"
    out.mkdir()
    (out / "lineage.json").write_bytes(content)
    assert main(_walk_args(out)) == 2
    err = capsys.readouterr().err
    assert str(out / "lineage.json") + where.removeprefix("lineage.json") in err, err
    assert "--restart" in err  # how to start over, on purpose
    _no_traceback(err)
    assert _tree(out) == {"lineage.json": content}  # untouched, nothing added


def test_a_state_file_that_is_not_the_recorded_one_is_an_error(tmp_path, capsys):
    """A lineage whose state file was edited (or is missing) is not resumable: an error
    naming the state file, the walk left as it is (it used to start over silently)."""
    out = tmp_path / "L"
    shutil.copytree(RS_LINEAGE, out)
    st = out / "states" / "03-drop-stream-hints.cu"
    assert st.is_file()
    st.write_bytes(st.read_bytes() + b"// edited by hand\n")
    (out / "states" / "27-left-over.cu").write_text("// from another walk\n")
    before = _tree(out)
    assert main(_walk_args(out)) == 2
    err = capsys.readouterr().err
    assert f"{st}: error: not the state {out / 'lineage.json'} recorded" in err, err
    assert "--restart" in err
    _no_traceback(err)
    assert _tree(out) == before
    st.unlink()
    before = _tree(out)
    assert main(_walk_args(out)) == 2
    err = capsys.readouterr().err
    assert f"{st}: error: a state file" in err and "cannot be read" in err, err
    assert _tree(out) == before


# ------------------------------------------------------------------ lineage.json of another shape
SHAPES = [
    (b"[1]\n", "the file: [1] is not of type 'object'"),
    (b'"lineage"\n', "the file: 'lineage' is not of type 'object'"),
    (b'{"states": []}\n', "the file: 'config' is a required property"),
    (b'{"states": 5}\n', "the file: 'config' is a required property"),
    (b'{"config": {"workload": "w", "expert": "e.cu", "kernel": "k"}, "states": 5, '
     b'"transitions": []}\n', "states: 5 is not of type 'array'"),
    (b'{"config": {"workload": "w", "expert": "e.cu", "kernel": "k"}, "states": '
     b'[{"file": "states/00-expert.cu", "hash": "ab"}], "transitions": [{"step": 1, '
     b'"before": "ab", "after": "cd"}]}\n',
     "transitions[0].after: 'cd' names none of the states"),
]
SHAPE_IDS = ["array", "string", "no-config", "states-number", "states-number-2",
             "dangling-step"]


@pytest.mark.parametrize("content, what", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("command", ["walk", "measure", "composite", "skills-extract"])
def test_a_lineage_of_another_shape_is_an_error(tmp_path, capsys, content, what, command):
    out = tmp_path / "L"
    out.mkdir()
    (out / "lineage.json").write_bytes(content)
    args = {"walk": _walk_args(out),
            # the lineage is read (and checked) before the GPU check: no GPU needed
            "measure": ["lineage", RS, "--measure", "--out", str(out), "--quiet"],
            "composite": ["lineage", RS, "--composite", "--out", str(out), "--quiet"],
            "skills-extract": ["skills", "extract", str(out), "-o", str(tmp_path / "cards")],
            }[command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{out / 'lineage.json'}: error: not a kltrans lineage: " in err, err
    assert what in err, err
    _no_traceback(err)
    assert _tree(out) == {"lineage.json": content}
    assert not (tmp_path / "cards").exists()


def test_the_shape_check_accepts_every_committed_lineage():
    from kltrans.lineage import store

    paths = [os.path.join(r, "lineage.json") for r, _, fs in os.walk(os.path.join(ROOT, "corpus"))
             if "lineage.json" in fs]
    assert len(paths) >= 2
    for p in paths:
        assert store.read_doc(p)["transitions"], p


# ------------------------------------------------------------------ skill cards
@pytest.fixture
def lib(tmp_path):
    """A small skill library: three of the shipped cards."""
    d = tmp_path / "sk"
    d.mkdir()
    for c in ("unroll", "add-launch-bounds", "restrict-pointers"):
        shutil.copy(os.path.join(SKILLS, f"{c}.yaml"), d / f"{c}.yaml")
    return d


@pytest.mark.parametrize("action", ["list", "validate", "show", "render", "optimize"])
def test_a_card_that_is_not_utf8_is_an_error(lib, capsys, action):
    card = lib / "unroll.yaml"
    raw = card.read_bytes() + b"\xff\n"
    card.write_bytes(raw)
    lines = raw.count(b"\n")
    before = _tree(lib)
    args = {"show": ["skills", "show", "unroll", "--dir", str(lib)],
            "optimize": ["optimize", os.path.join(RS, "naive.cu"), "--workload", RS,
                         "--skills", str(lib), "--backend", "cpu", "--budget", "1", "--quiet"],
            }.get(action, ["skills", action, "--dir", str(lib)])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{card}:{lines}:1: error: not UTF-8" in err, err
    _no_traceback(err)
    assert _tree(lib) == before


def test_a_card_of_another_shape_is_an_error_in_render_and_show(lib, capsys):
    card = lib / "unroll.yaml"
    text = card.read_text()
    assert "\noptions:" in text
    card.write_text(text.replace("\noptions:", "\noptions: 7\nx:", 1))
    raw = card.read_bytes()
    for args in (["skills", "render", "--dir", str(lib)],
                 ["skills", "show", "unroll", "--dir", str(lib)]):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert f"{card}:1:1: error: cannot render the card: " in err, err
        _no_traceback(err)
    assert not (lib / "README.md").exists()  # the library's index is not written
    # validate lists the card's problems (its convention: exit 1)
    assert main(["skills", "validate", "--dir", str(lib)]) == 1
    err = capsys.readouterr().err
    assert f"{card}:1:1: error: options: 7 is not of type 'object'" in err, err
    _no_traceback(err)
    assert card.read_bytes() == raw


def test_a_card_with_a_bad_character_names_its_line(lib, capsys):
    card = lib / "unroll.yaml"
    raw = card.read_bytes().replace(b"\nanchor:", b"\n\x01anchor:", 1)
    card.write_bytes(raw)
    line = raw[:raw.index(b"\x01")].count(b"\n") + 1
    assert main(["skills", "list", "--dir", str(lib)]) == 2
    err = capsys.readouterr().err
    assert f"{card}:{line}:1: error: not valid YAML: character #x0001" in err, err
    _no_traceback(err)
    assert card.read_bytes() == raw


def test_validate_reports_an_unknown_pass_and_a_duplicate_id(lib, capsys):
    card = lib / "unroll.yaml"
    text = card.read_text()
    assert "\npass: unroll\n" in text
    card.write_text(text.replace("\npass: unroll\n", "\npass: unrol\n", 1))
    twin = lib / "unroll-copy.yaml"
    shutil.copy(os.path.join(SKILLS, "unroll.yaml"), twin)  # id: unroll, a second time
    before = _tree(lib)
    assert main(["skills", "validate", "--dir", str(lib)]) == 1
    cap = capsys.readouterr()
    # optimize's wording for a card whose pass is unknown
    assert (f"{card}:1:1: error: pass: unknown pass 'unrol'; did you mean unroll" in cap.err), cap.err
    assert f"{twin}:1:1: error: id: 'unroll' is also the id of {card}" in cap.err, cap.err
    assert "4 card(s), 2 problem(s)" in cap.out
    _no_traceback(cap.err)
    # render does not write a library with two cards of one id
    assert main(["skills", "render", "--dir", str(lib)]) == 2
    err = capsys.readouterr().err
    assert f"{twin}:1:1: error: cannot render the card: id: 'unroll'" in err, err
    assert not (lib / "README.md").exists()  # the library's index is not written
    # the cards are as they were (render writes only the .md views of the valid ones)
    assert {k: v for k, v in _tree(lib).items() if k.endswith(".yaml")} == before


def test_the_shipped_library_is_still_valid(capsys):
    from kltrans.skills import load_cards, render_card, validate_card

    cards = load_cards(SKILLS)
    assert cards and all(validate_card(c) == [] for _, c in cards.values())
    for cid, (path, c) in cards.items():  # rendered as it is committed
        assert render_card(c) == open(path[:-5] + ".md", encoding="utf-8").read(), cid


@pytest.mark.parametrize("edit, what", [
    (lambda rt: rt.pop("inverse"), "step 2 cannot be read: no 'inverse'"),
    (lambda rt: rt.update(inverse="nopass"), "step 2 cannot be read: unknown pass 'nopass'"),
], ids=["no-inverse", "unknown-inverse"])
def test_skills_extract_names_a_step_it_cannot_read(tmp_path, capsys, edit, what):
    import json

    out = tmp_path / "L"
    shutil.copytree(RS_LINEAGE, out)
    doc = json.loads((out / "lineage.json").read_text())
    assert doc["transitions"][1]["step"] == 2 and doc["transitions"][1]["roundtrip"]["ok"]
    edit(doc["transitions"][1]["roundtrip"])
    (out / "lineage.json").write_text(json.dumps(doc))
    before = _tree(out)
    assert main(["skills", "extract", str(out), "-o", str(tmp_path / "cards")]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'lineage.json'}: error: {what}" in err, err
    _no_traceback(err)
    assert _tree(out) == before and not (tmp_path / "cards").exists()


def test_skills_list_and_render_with_a_card_of_the_wrong_shape(tmp_path, capsys):
    """A card whose provenance is not a list: list still lists (the count unknown), and
    render writes no view at all, not the views of the cards before it."""
    import shutil

    sk = tmp_path / "sk"
    sk.mkdir()
    for f in ("add-launch-bounds.yaml", "unroll.yaml"):
        shutil.copy(os.path.join(ROOT, "skills", f), sk / f)
    bad = sk / "unroll.yaml"
    bad.write_text(bad.read_text().replace("provenance:", "provenance: 7\nold_provenance:", 1))
    assert main(["skills", "list", "--dir", str(sk)]) == 0
    out = capsys.readouterr()
    assert "unroll" in out.out and "? evidence" in out.out and "Traceback" not in out.err
    assert main(["skills", "render", "--dir", str(sk)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "Traceback" not in err
    assert sorted(os.listdir(sk)) == ["add-launch-bounds.yaml", "unroll.yaml"]


def test_a_walk_of_other_inputs_in_out_is_left_as_it_is(tmp_path, capsys):
    """OUT holds a readable walk made with other inputs (here the committed CPU walk, and
    this call's probes): an error naming what differs, the walk untouched, --restart the
    way to replace it; no gate time spent."""
    import shutil

    out = tmp_path / "L"
    shutil.copytree(RS_LINEAGE, out)
    before = _tree(out)
    assert main(_walk_args(out)) == 2
    err = capsys.readouterr().err
    assert f"{out}: holds a walk made with other inputs" in err and "--restart" in err, err
    assert "probes" in err  # and what else differs (the passes, after a kltrans upgrade)
    _no_traceback(err)
    assert _tree(out) == before
