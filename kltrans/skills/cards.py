"""Build, validate, store and render skill cards from lineages."""

from __future__ import annotations

import hashlib
import os

import yaml

from kltrans.syntax import yamldoc
from kltrans.syntax.files import atomic_write

SCHEMA_VERSION = 1
CATEGORIES = ("dtype", "layout", "storage", "pipeline", "hardware")

_FEATURE = {"type": "object", "required": ["locus", "name"], "additionalProperties": False,
            "properties": {"locus": {"enum": ["site", "function", "kernel", "launch"]},
                           "name": {"type": "string", "minLength": 1}}}

CARD_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "kltrans skill card",
    "type": "object",
    "additionalProperties": False,
    "required": ["schema", "id", "intent", "pass", "inverse", "options", "anchor",
                 "preconditions", "effect", "failures_avoided", "requires", "provides",
                 "conflicts", "provenance", "verification"],
    "properties": {
        "schema": {"const": SCHEMA_VERSION},
        "id": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "intent": {"type": "string", "minLength": 10},
        "pass": {"type": "string"},
        "inverse": {"type": "string"},
        "facts": {"type": "array", "items": {"type": "string"},
                  "description": "context facts the lineages assumed (kltrans opt --assume syntax)"},
        "options": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["domain", "seen"],
            "properties": {"domain": {"type": "string"}, "default": {},
                           "seen": {"type": "array"}, "doc": {"type": "string"}}}},
        "anchor": {"type": "object", "required": ["rule", "examples"], "properties": {
            "rule": {"type": "string", "minLength": 1},
            "examples": {"type": "array", "items": {
                "type": "object", "required": ["workload", "code"],
                "properties": {"workload": {"type": "string"}, "code": {"type": "string"},
                               "line": {"type": "integer"}}}}}},
        "preconditions": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["name", "category", "check", "reason", "seen"],
            "properties": {
                "name": {"type": "string"},
                "category": {"enum": list(CATEGORIES)},
                "check": {"type": "string", "pattern": "^[a-z][a-z0-9-]*/[a-z0-9-]+$"},
                "reason": {"type": "string"},
                "seen": {"type": "array", "items": {
                    "type": "object", "required": ["workload", "status"],
                    "properties": {"workload": {"type": "string"},
                                   "status": {"enum": ["holds", "fails", "unknown"]},
                                   "reason": {"type": "string"}}}}}}},
        "effect": {"type": "array", "items": {
            "type": "object", "required": ["workload", "arch", "measured"],
            "properties": {"workload": {"type": "string"}, "arch": {"type": "string"},
                           "gpu": {"type": ["string", "null"]},
                           "measured": {"type": "boolean"},
                           "speedup": {"type": "number", "exclusiveMinimum": 0},
                           "speedup_trials": {"type": "array", "items": {"type": "number"}},
                           "spread": {"type": "number", "minimum": 0},
                           "resources": {"type": ["object", "null"]},
                           "together": {
                               "type": "object", "required": ["with", "speedup", "steps"],
                               "description": "alone it was slower; with these passes "
                                              "(applied after it) it was not; share: its "
                                              "part of that over theirs alone (carried "
                                              "where under 0.99)",
                               "properties": {
                                   "with": {"type": "array", "items": {"type": "string"}},
                                   "speedup": {"type": "number", "exclusiveMinimum": 0},
                                   "speedup_trials": {"type": "array",
                                                      "items": {"type": "number"}},
                                   "steps": {"type": "array", "items": {"type": "integer"}},
                                   "share": {"type": ["number", "null"]},
                                   "carried": {"type": ["boolean", "null"]}}},
                           "note": {"type": "string"}}}},
        "failures_avoided": {"type": "object", "required": ["items"], "properties": {
            "items": {"type": "array", "items": {
                "type": "object", "required": ["workload", "precondition", "stage", "evidence"],
                "properties": {"workload": {"type": "string"},
                               "precondition": {"type": "string"},
                               "category": {"enum": list(CATEGORIES)},
                               "stage": {"type": "string"}, "evidence": {"type": "string"},
                               "probe": {"type": "string"}}}},
            "none_because": {"type": "string", "minLength": 10}}},
        "requires": {"type": "array", "items": _FEATURE},
        "provides": {"type": "array", "items": _FEATURE},
        "conflicts": {"type": "array", "items": _FEATURE},
        "provenance": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["workload", "lineage", "step"],
            "properties": {"workload": {"type": "string"}, "lineage": {"type": "string"},
                           "step": {"type": "integer", "minimum": 1},
                           "before": {"type": "string"}, "after": {"type": "string"},
                           "backend": {"type": "string"}}}},
        "verification": {"type": "array", "items": {"type": "object"}},
    },
}


class CardError(ValueError):
    """A lineage or card that cannot be read."""


def validate_card(card: dict) -> list[str]:
    """Every schema violation, as 'path: message' (empty: valid)."""
    from jsonschema import Draft202012Validator

    v = Draft202012Validator(CARD_SCHEMA)
    errs = []
    for e in sorted(v.iter_errors(card), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in e.absolute_path) or "(card)"
        errs.append(f"{where}: {e.message}")
    fa = card.get("failures_avoided") or {}
    if isinstance(fa, dict) and not fa.get("items") and not fa.get("none_because"):
        errs.append("failures_avoided: no failure from a probe and no 'none_because'")
    errs += _unknown_passes(card)
    errs += list(getattr(card, "problems", ()))  # found by load_cards: a duplicate id
    return errs


def _unknown_passes(card: dict) -> list[str]:
    """``pass`` and ``inverse`` must name registered passes (as ``kltrans optimize``, which
    rejects a card whose pass is unknown, and a walk, which applies the inverse, need)."""
    from kltrans.passes.registry import UnknownPass, table

    known = table()
    return [f"{key}: {UnknownPass(card[key], sorted(known))}" for key in ("pass", "inverse")
            if isinstance(card.get(key), str) and card[key] not in known]


def _features(p, key: str) -> list[dict]:
    declared = getattr(p, "features", None) or {}
    if key in declared:
        return [dict(f) for f in declared[key]]
    if key == "provides":
        return [{"locus": "site", "name": p.name}]
    return []


def _lineage_hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def _site_snippet(state_path: str, line: int, context: int = 3) -> str:
    try:
        lines = open(state_path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return ""
    lo = max(0, line - 1)
    return "\n".join(lines[lo:lo + context])


def extract(lineage_dirs: list[str]) -> dict[str, dict]:
    """Cards by id from the lineages in ``lineage_dirs`` (each with lineage.json)."""
    from kltrans.workload import lineage_store as store
    from kltrans.passes.pipeline import PipelineError, parse_pipeline
    from kltrans.passes.registry import UnknownPass, get_pass

    cards: dict[str, dict] = {}
    for d in lineage_dirs:
        path = os.path.join(d, "lineage.json")
        try:
            doc = store.read_doc(path)
        except store.LineageError as e:
            raise CardError(str(e)) from None
        cfg = doc["config"]
        wl = cfg["workload"]
        if cfg.get("suite") == "generality" or os.path.isfile(
                os.path.join(os.path.dirname(os.path.abspath(d)), "history.yaml")):
            raise CardError(f"{path}: a walk of a generality-suite lineage ({wl}): such "
                            f"lineages measure transfer and never become skill cards")
        lhash = _lineage_hash(path)
        for t in doc["transitions"]:
            try:
                rt = t.get("roundtrip") or {}
                if not rt.get("ok"):
                    continue
                inv = parse_pipeline(rt["inverse"])[0]
                cls = get_pass(inv.name)
                card = cards.get(inv.name)
                if card is None:
                    card = _new_card(inv, cls)
                    cards[inv.name] = card
                _add_evidence(card, inv, d, doc, t, wl, lhash)
            except (KeyError, TypeError, AttributeError, ValueError, StopIteration) as e:
                # a hand-edited step, or one of a pass no longer registered
                if isinstance(e, PipelineError):
                    what = f"{e.message} in {e.text!r}" + (f" ({e.hint})" if e.hint else "")
                elif isinstance(e, UnknownPass):
                    what = str(e)
                else:
                    what = f"no {e}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
                raise CardError(f"{path}: error: step {t.get('step')} cannot be read: "
                                f"{what}") from None
    for card in cards.values():
        _finish(card)
    return cards


def _new_card(inv, cls) -> dict:
    opts = {}
    for o in cls.options():
        opts[o.name] = {"domain": o.domain.describe(), "default": o.default, "seen": [],
                        "doc": o.doc}
    pres = []
    for pre in cls.preconditions:
        pres.append({"name": pre.name, "category": pre.category,
                     "check": f"{inv.name}/{pre.name}",
                     "reason": pre.doc or pre.name, "seen": []})
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    intent = " ".join(doc.split()) or cls.summary()
    return {"schema": SCHEMA_VERSION, "id": inv.name, "intent": intent,
            "pass": inv.name, "inverse": cls.inverse, "facts": [], "options": opts,
            "anchor": {"rule": cls.anchor.describe() if cls.anchor else "(custom sites)",
                       "examples": []},
            "preconditions": pres, "effect": [], "failures_avoided": {"items": []},
            "requires": _features(cls, "requires"), "provides": _features(cls, "provides"),
            "conflicts": _features(cls, "conflicts"), "provenance": [], "verification": []}


def _add_evidence(card, inv, d, doc, t, wl, lhash):
    from kltrans.passes.facts import Context
    from kltrans.syntax import parse

    cfg = doc["config"]
    for name, val in inv.option_values().items():
        seen = card["options"].setdefault(name, {"domain": "?", "seen": []})["seen"]
        if val not in seen:
            seen.append(val)
    after_state = next(s for s in doc["states"] if s["hash"] == t["after"])
    before_state = next(s for s in doc["states"] if s["hash"] == t["before"])
    state_path = os.path.join(d, after_state["file"])
    # the skill's site in the simplified state, and its preconditions there
    facts = list(cfg.get("facts") or [])
    try:
        unit = parse(open(state_path, "rb").read(), state_path)
        ctx = Context.from_strings(tuple(facts), cfg.get("arch"), False, cfg.get("kernel"))
        sites = inv.sites(unit, ctx)
        want = (t["roundtrip"].get("sites") or [None])
        idx = want[0] if isinstance(want, list) else None
        site = next((s for s in sites if idx is None or s.index == idx), None)
    except Exception:
        site = None
    if site is not None:
        loc = site.location()
        card["anchor"]["examples"].append({"workload": wl, "line": loc.line,
                                           "code": unit.text(site.node)[:600]})
        for pre, v in inv.check(site, ctx):
            for p in card["preconditions"]:
                if p["name"] == pre.name:
                    p["seen"].append({"workload": wl, "status": "holds" if v.holds else v.status,
                                      "reason": v.reason})
        for f in facts:
            if f not in card["facts"]:
                card["facts"].append(f)
    e = t.get("effect") or {}
    res = t.get("resources")
    inv_res = {k: -v for k, v in res.items()} if isinstance(res, dict) else None
    if e.get("ok"):
        trials = [round(x, 4) for x in e["slowdown_trials"]]
        card["effect"].append({"workload": wl, "arch": cfg.get("arch", "sm_90"),
                               "gpu": e.get("device") or doc.get("gpu"), "measured": True,
                               "speedup": round(e["slowdown_median"], 4),
                               "speedup_trials": trials, "spread": round(e["spread"], 4),
                               "resources": inv_res})
        comp = (t.get("roundtrip") or {}).get("composite") or {}
        if comp.get("no_slower"):
            from kltrans.passes.pipeline import parse_pipeline

            card["effect"][-1]["together"] = {
                "with": [parse_pipeline(x)[0].name for x in comp["inverses"][1:]],
                "speedup": round(comp["slowdown_median"], 4),
                "speedup_trials": [round(x, 4) for x in comp["slowdown_trials"]],
                "steps": comp["steps"], "share": comp.get("share"),
                "carried": comp.get("carried")}
    else:
        card["effect"].append({"workload": wl, "arch": cfg.get("arch", "sm_90"),
                               "gpu": doc.get("gpu"), "measured": False,
                               "resources": inv_res,
                               "note": e.get("reason", "not measured")})
    for pr in t.get("probes") or []:
        if pr.get("outcome") != "failed":
            continue
        for v in pr.get("violated") or [{"precondition": f"option {pr['label']}",
                                          "category": None}]:
            item = {"workload": wl, "precondition": v["precondition"],
                    "stage": pr.get("stage", "?"), "evidence": pr.get("evidence", ""),
                    "probe": f"{pr['kind']}: {pr['label']}"}
            if v.get("category"):
                item["category"] = v["category"]
            card["failures_avoided"]["items"].append(item)
    card["provenance"].append({"workload": wl, "lineage": lhash, "step": t["step"],
                               "before": after_state["hash"], "after": before_state["hash"],
                               "backend": cfg.get("backend")})
    card["verification"].append({"workload": wl, "step": t["step"], "gate": t.get("gate"),
                                 "roundtrip": t.get("roundtrip"),
                                 "probes": len(t.get("probes") or [])})


def _finish(card):
    fa = card["failures_avoided"]
    if not fa["items"]:
        probes = sum(v.get("probes", 0) for v in card["verification"])
        fa["none_because"] = (
            f"its {probes} probe(s) found no failure: every forced site and option variant "
            f"passed the gate at the walk's sizes" if probes else
            "no probe could be made: the optimize pass has no other site, and no other "
            "option value, in the simplified kernels of its lineages")


def write_cards(cards: dict[str, dict], out: str) -> list[str]:
    os.makedirs(out, exist_ok=True)
    written = []
    for cid, card in sorted(cards.items()):
        y = os.path.join(out, f"{cid}.yaml")
        atomic_write(y, yaml.safe_dump(card, sort_keys=False, allow_unicode=True, width=100).encode())
        atomic_write(os.path.join(out, f"{cid}.md"), render_card(card).encode())
        written.append(y)
    atomic_write(os.path.join(out, "README.md"), render_index(cards).encode())
    return written


class LoadedCard(dict):
    """A card as :func:`load_cards` read it: the mapping of its YAML file, with the file
    (``path``) and what is wrong with it beyond the schema (``problems``: another card
    with its id), which :func:`validate_card` reports with its own findings."""

    path: str = ""
    problems: tuple = ()


def _read_card(p: str):
    from kltrans.syntax.diagnostics import InputError
    from kltrans.syntax.unit import read_failure, read_source

    try:
        text = read_source(p)
    except InputError as e:
        where, why = read_failure(e)
        raise CardError(f"{where}: error: {why}; a card is UTF-8 YAML") from None
    try:
        return yamldoc.safe_load(text)
    except yaml.reader.ReaderError as e:  # a character YAML does not allow
        line = text.count("\n", 0, e.position) + 1
        col = e.position - text.rfind("\n", 0, e.position)
        raise CardError(f"{p}:{line}:{col}: error: not valid YAML: character "
                        f"#x{e.character:04x}: {e.reason}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark else p
        raise CardError(f"{where}: error: not valid YAML: {getattr(e, 'problem', None) or e}") from None
    except RecursionError:
        raise CardError(f"{p}: error: not valid YAML: nested too deeply") from None


def load_cards(d: str) -> dict[str, tuple[str, dict]]:
    """The cards of ``d`` (every ``*.yaml``) by id: ``(path, card)``, each card a
    :class:`LoadedCard`. A file that cannot be read, is not UTF-8, not YAML or not a
    mapping raises :class:`CardError` naming it; a card that breaks the schema is returned
    (``kltrans skills validate`` lists its problems). A card whose id another card has is
    kept too, under its file name, and its duplicate id is one of its problems."""
    if not os.path.isdir(d):
        raise CardError(f"{d}: not a directory")
    read = []  # (file name, path, card)
    for f in sorted(os.listdir(d)):
        if not f.endswith(".yaml"):
            continue
        p = os.path.join(d, f)
        data = _read_card(p)
        if not isinstance(data, dict):
            raise CardError(f"{p}:1:1: error: a card is a mapping")
        card = LoadedCard(data)
        card.path = p
        read.append((f, p, card))

    def cid_of(card) -> str | None:
        cid = card.get("id")
        return cid if isinstance(cid, str) and cid else None

    # a card id had by several files: the file named after it (as write_cards names
    # them), else the first, keeps it; every other one has a duplicate id
    owner: dict[str, str] = {}
    for f, p, card in read:
        cid = cid_of(card)
        if cid is not None and (cid not in owner or f == f"{cid}.yaml"):
            owner[cid] = p
    out: dict[str, tuple[str, dict]] = {}
    for f, p, card in read:
        cid = cid_of(card)
        if cid is not None and owner[cid] == p:
            out[cid] = (p, card)
    for f, p, card in read:
        cid = cid_of(card)
        if cid is not None and owner[cid] == p:
            continue
        if cid is not None:
            card.problems = (f"id: {cid!r} is also the id of {owner[cid]} (card ids are "
                             f"unique)",)
        key = f[:-5] if f[:-5] not in out else f  # kept, under its file name
        out[key] = (p, card)
    return dict(sorted(out.items(), key=lambda kv: kv[1][0]))  # in file order


def _effect_cell(e: dict) -> str:
    if e.get("measured"):
        cell = f"{e['speedup']:.3f}x (spread {e['spread']:.3f})"
        tog = e.get("together")
        if tog:
            cell += f"; {tog['speedup']:.3f}x together with {', '.join(dict.fromkeys(tog['with']))}"
            if tog.get("share") is not None:
                cell += (f" (its share {tog['share']:.3f}: "
                         + ("carried by them)" if tog["carried"] else "it pays with them)"))
        return cell
    return "not measured"


def _render_error(card, why: str | None, e: Exception | None = None) -> CardError:
    """The error of a card that cannot be rendered: ``why``, else its first schema
    problem (else the exception rendering raised)."""
    path = getattr(card, "path", "") if isinstance(card, dict) else ""
    cid = card.get("id") if isinstance(card, dict) else None
    where = f"{path}:1:1: error" if path else f"card {cid!r}"
    more = ""
    if why is None:
        errs = validate_card(card) if isinstance(card, dict) else []
        why = errs[0] if errs else f"{type(e).__name__}: {e}"
        if len(errs) > 1:
            more = f" ({len(errs) - 1} more: 'kltrans skills validate' lists them)"
    return CardError(f"{where}: cannot render the card: {why}{more}")


def render_card(card: dict) -> str:
    """The Markdown view of a card; :class:`CardError` (naming its file) where the card
    does not have the shape rendering needs, or another card has its id."""
    if getattr(card, "problems", ()):
        raise _render_error(card, card.problems[0])
    try:
        return _render_card(card)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
        raise _render_error(card, None, e) from None


def _render_card(card: dict) -> str:
    w = [f"# {card['id']}", "", card.get("intent", "(no intent)"), "",
         f"Optimize pass `{card['pass']}`; its simplify inverse `{card['inverse']}`.", "",
         "## Where it applies", "", f"Anchor: `{card['anchor']['rule']}`", ""]
    for ex in card["anchor"]["examples"][:3]:
        w += [f"In {ex['workload']} (line {ex.get('line', '?')}):", "", "```cuda", ex["code"], "```", ""]
    w += ["## When it is valid", "", "| precondition | category | holds in | reason |",
          "| --- | --- | --- | --- |"]
    for p in card["preconditions"]:
        held = ", ".join(sorted({s["workload"] for s in p["seen"] if s["status"] == "holds"})) or "-"
        w.append(f"| `{p['name']}` | {p['category']} | {held} | {p['reason']} |")
    w += ["", "## Effect", "", "| workload | arch | GPU | speedup | resources |", "| --- | --- | --- | --- | --- |"]
    for e in card["effect"]:
        res = ", ".join(f"{k} {v:+d}" for k, v in (e.get("resources") or {}).items()) or "-"
        w.append(f"| {e['workload']} | {e['arch']} | {e.get('gpu') or '-'} | {_effect_cell(e)} | {res} |")
    w += ["", "## Failures its conditions avoid", ""]
    fa = card["failures_avoided"]
    for it in fa["items"]:
        w.append(f"- without `{it['precondition']}` ({it.get('category', '-')}), {it['workload']}: "
                 f"{it['stage']} fails: {it['evidence']} ({it.get('probe', '')})")
    if not fa["items"]:
        w.append(f"None found: {fa.get('none_because', '')}")
    w += ["", "## Options", "", "| option | domain | seen |", "| --- | --- | --- |"]
    for name, o in card["options"].items():
        w.append(f"| {name} | {o['domain']} | {', '.join(str(v) for v in o['seen']) or '-'} |")
    w += ["", "## Provenance", ""]
    for p in card["provenance"]:
        w.append(f"- {p['workload']}, lineage {p['lineage']}, step {p['step']} ({p.get('backend', '')})")
    return "\n".join(w) + "\n"


def render_index(cards: dict[str, dict]) -> str:
    """The library's README; :class:`CardError` (naming its file) for a card whose shape
    does not allow it."""
    for c in cards.values():
        try:
            _index_row("", c)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
            raise _render_error(c, None, e) from None
    return _render_index(cards)


def _index_row(cid: str, c: dict) -> str:
    eff = "; ".join(f"{e['workload']}: {_effect_cell(e)}" for e in c["effect"])
    return (f"| [{cid}]({cid}.md) | {c.get('intent', '')} | {len(c['provenance'])} | {eff} | "
            f"{len(c['failures_avoided']['items'])} |")


def _render_index(cards: dict[str, dict]) -> str:
    w = ["# Skill library", "",
         "Skill cards extracted from the corpus lineages (`kltrans skills extract "
         "corpus/*/lineage -o skills/`): one card per optimization, with its evidence from "
         "every lineage that took it. `kltrans skills list|show ID|validate|render`.", "",
         "| card | intent | evidence | effect | failures avoided |",
         "| --- | --- | --- | --- | ---: |"]
    for cid, c in sorted(cards.items()):
        w.append(_index_row(cid, c))
    return "\n".join(w) + "\n"
