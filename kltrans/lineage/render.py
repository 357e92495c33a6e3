"""``lineage.md`` (one section per step, with its diff) and ``time.svg`` (time per state)."""

from __future__ import annotations

import difflib
import os
from html import escape


def _diff(out: str, a: dict, b: dict) -> str:
    def lines(st):
        p = os.path.join(out, st["file"])
        if not os.path.isfile(p):
            return []
        return open(p, encoding="utf-8", errors="replace").read().splitlines()

    return "\n".join(difflib.unified_diff(lines(a), lines(b), a["file"], b["file"],
                                          lineterm="", n=2))


def render_markdown(out: str, doc: dict) -> str:
    cfg = doc["config"]
    term = doc.get("termination") or {"kind": "in progress", "reason": ""}
    w = [f"# Lineage of {cfg['workload']} ({cfg['expert']})", "",
         f"{doc['tool']}; backend {cfg['backend']}, {cfg['arch']}"
         f"{', GPU ' + doc['gpu'] if doc.get('gpu') else ''}; test sizes "
         f"{', '.join(str(s) for s in cfg['sizes'])}; seeds {cfg['seeds']}.", "",
         f"Termination: **{term['kind']}** {('(' + term['reason'] + ')') if term['reason'] else ''}",
         "", "![time per state](time.svg)", "",
         "| step | pass | site | chosen by | effect | alternatives | rejected |",
         "| ---: | --- | --- | --- | --- | ---: | ---: |"]
    for t in doc["transitions"]:
        e = t.get("effect") or {}
        eff = (f"{e['slowdown_median']:.3f}x slower without it" if e.get("ok") else
               e.get("reason", "-"))
        site = t["site"]
        w.append(f"| {t['step']} | `{t['spec']}` | line {site['line']} ({site['function']}) | "
                 f"{t['chosen_by']} | {eff} | {len(t['alternatives'])} | {len(t['rejected'])} |")
    w.append("")
    states = doc["states"]
    for i, t in enumerate(doc["transitions"]):
        a, b = states[i], states[i + 1]
        w += [f"## Step {t['step']}: {t['spec']}", "",
              f"`{a['file']}` ({a['hash']}) -> `{b['file']}` ({b['hash']}); site {t['site']['index']} "
              f"at line {t['site']['line']}; round trip: "
              f"{'ok (' + t['roundtrip']['inverse'] + ')' if t['roundtrip'] and t['roundtrip'].get('ok') else 'FAILED'}.",
              ""]
        if (t.get("roundtrip") or {}).get("no_slower") is False:
            w += [_slower_inverse(t), ""]
        if t.get("resources"):
            w += ["Resource change: " + ", ".join(f"{k} {v:+d}" for k, v in t["resources"].items()), ""]
        w += ["```diff", _diff(out, a, b), "```", ""]
        if t["rejected"]:
            w.append("Rejected candidates:")
            w.append("")
            for r in t["rejected"]:
                w.append(f"- `{r['spec']}` site {r['site']['index']} (line {r['site']['line']}): "
                         f"{r.get('stage')}: {r.get('reason', '')}")
            w.append("")
    return "\n".join(w) + "\n"


def render_svg(doc: dict) -> str:
    """A bar per state: its time at the bench size (GPU walks), else a note."""
    states = doc["states"]
    times = [None] * len(states)
    for t in doc["transitions"]:
        e = t.get("effect") or {}
        if e.get("ok"):
            times[t["step"] - 1] = times[t["step"] - 1] or e["current_ms"]
            times[t["step"]] = e["simplified_ms"]
    W, H, pad = 640, 240, 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
             f'font-family="sans-serif" font-size="11">',
             f'<text x="{pad}" y="16">time per state, ms ({escape(doc["config"]["workload"])})</text>']
    known = [x for x in times if x]
    if not known:
        parts.append(f'<text x="{pad}" y="{H // 2}">not timed: this walk ran without a GPU '
                     f'(backend {escape(doc["config"]["backend"])})</text>')
    else:
        top = max(known)
        bw = (W - 2 * pad) / max(1, len(states))
        for i, (st, x) in enumerate(zip(states, times)):
            xpos = pad + i * bw
            if x:
                h = (H - 2 * pad) * x / top
                parts.append(f'<rect x="{xpos + 2:.1f}" y="{H - pad - h:.1f}" width="{bw - 4:.1f}" '
                             f'height="{h:.1f}" fill="#4878a8"><title>{escape(st["file"])}: '
                             f'{x:.4f} ms</title></rect>')
            parts.append(f'<text x="{xpos + 2:.1f}" y="{H - pad + 14}">{i}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _slower_inverse(t: dict) -> str:
    """What the round trip found where the step's inverse alone is slower."""
    e = t.get("effect") or {}
    line = (f"On the GPU the inverse alone is slower: this state is {e.get('slowdown_median', 0):.3f}x "
            f"the time of the one before it (median).")
    c = t["roundtrip"].get("composite")
    if c is None:
        return line + " Its composite round trip has not been timed."
    if not c.get("no_slower"):
        return line + (f" No composite with up to {c.get('max_back')} step(s) peeled before it "
                       "is no slower.")
    line += (f" With the inverses of steps {', '.join(map(str, c['steps'][1:]))} the state "
             f"before them is {c['slowdown_median']:.3f}x faster")
    if c.get("share") is not None:
        line += (f"; its share of that, over the {c['others']:.3f}x of those steps alone, is "
                 f"{c['share']:.3f}" + (": carried by them, no evidence that it pays"
                                        if c["carried"] else ": it pays together with them"))
    return line + "."
