"""The LLM parameter filler: an OpenAI-compatible chat model chooses from the menu.

The model is shown the kernel, every offer on the menu (card, site, intent, the
preconditions that hold there, the measured effect, the failures the card avoids, and
each option's offered values) and the picks tried so far with their verdicts. Its reply
is constrained by a JSON schema that enumerates exactly the menu's offer ids and, per
offer, the offered option values; the reply is validated again here (JSON, the schema,
then :func:`kltrans.optimize.menu.check_pick`), because a server may ignore
``response_format``. A reply that fails is rejected without touching the gate (this
module has no gate access at all), recorded in :attr:`LLMFiller.events` and retried with
a short corrective message, at most ``max_retries`` times.

Only an (offer id, option values) pair ever leaves this module: the model never writes
code. ``openai`` and ``jsonschema`` are imported lazily.

Errors:

- :class:`LLMConfigError`: no API key, no model, or the server refused the key or the
  model (HTTP 401/403/404). The CLI reports it and exits 2.
- :class:`LLMUnavailable`: the server could not be reached, timed out, or answered with
  an HTTP error (5xx, 429, other 4xx). The optimizer falls back to the builtin filler when
  asked to (``--fallback builtin``), else reports it and stops.
- :class:`LLMReplyError`: every reply, first and retries, was malformed or off the menu.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Any

from kltrans.optimize.menu import Offer, Pick, check_pick

DONE = "done"                    # the offer id a model uses to say it wants to stop
RAW_KEEP = 2000                  # characters of a reply kept in an event
MAX_KERNEL_CHARS = 16000         # longer kernels are shown head and tail
MAX_SNIPPET_CHARS = 1200
MAX_HISTORY = 40                 # most recent tried picks shown

SYSTEM_PROMPT = """\
You tune CUDA kernels for the kltrans optimizer by choosing from a menu. Each offer on \
the menu is one verified rewrite (a skill card) at one site of the kernel, whose \
preconditions already hold there; some offers have options, each with a finite list of \
allowed values.

Rules:
1. Choose exactly one offer id from the menu and, for every option of that offer, one of \
its offered values. Nothing else is allowed: no other ids, no other values.
2. Never write or modify code. kltrans applies the rewrite itself; you only choose.
3. Do not repeat a pick from the history (same card, site and option values); prefer \
offers and values whose evidence suggests the largest speedup, and learn from the \
verdicts of earlier picks.
4. If nothing on the menu is worth trying, choose the offer "done".
5. Reply with a single JSON object and nothing else, of the form \
{"rationale": "<one or two sentences>", "choice": {"offer": "<offer id or done>", \
"options": {"<option name>": <value>, ...}}}."""


# a reply longer than this is not a pick (a pick is a few hundred characters)
MAX_REPLY = 65536


class LLMError(Exception):
    """Base class of the LLM filler's errors."""


class LLMConfigError(LLMError):
    """The filler cannot be set up: no key, no model, key or model refused."""


class LLMUnavailable(LLMError):
    """The server cannot be reached, timed out or answered with an HTTP error."""


class LLMReplyError(LLMError):
    """Every reply (the first and each retry) was malformed or outside the menu."""


# --------------------------------------------------------------------------------------
# schema


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise TypeError(f"option value {value!r} is not a JSON scalar")


def _types(values) -> str | list[str]:
    ts = sorted({_json_type(v) for v in values})
    return ts[0] if len(ts) == 1 else ts


def _object(props: dict) -> dict:
    return {"type": "object", "additionalProperties": False,
            "required": list(props), "properties": props}


def pick_schema(menu: list[Offer]) -> dict:
    """The JSON schema a reply must satisfy: one branch per offer, plus ``done``.

    Written for OpenAI's strict structured outputs (every property required, no extra
    properties, ``anyOf`` below the root object). Options without offered values are
    left out (they keep their defaults).
    """
    branches = []
    for offer in menu:
        if offer.id == DONE:
            raise ValueError(f"offer id {DONE!r} is reserved for stopping")
        opts = {oc.name: {"type": _types(oc.values), "enum": list(oc.values)}
                for oc in offer.options if oc.values}
        branches.append(_object({"offer": {"type": "string", "enum": [offer.id]},
                                 "options": _object(opts)}))
    branches.append(_object({"offer": {"type": ["string", "null"], "enum": [DONE, None]},
                             "options": _object({})}))
    return _object({"rationale": {"type": "string"}, "choice": {"anyOf": branches}})


def response_format(schema: dict) -> dict:
    """The ``response_format`` argument that constrains a reply to ``schema``."""
    return {"type": "json_schema",
            "json_schema": {"name": "pick", "strict": True, "schema": schema}}


# --------------------------------------------------------------------------------------
# prompt


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit} more characters]"


def truncate_kernel(source: str, limit: int = MAX_KERNEL_CHARS) -> str:
    """``source`` whole when short; else its first and last lines with a marked gap.

    The sites themselves are shown in full with each offer, so the gap loses no site.
    """
    if len(source) <= limit:
        return source
    lines = source.splitlines()
    head_budget = limit * 2 // 3
    head: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > head_budget:
            break
        head.append(line)
        size += len(line) + 1
    tail: list[str] = []
    for line in reversed(lines[len(head):]):
        if size + len(line) + 1 > limit:
            break
        tail.append(line)
        size += len(line) + 1
    tail.reverse()
    if not head and not tail:          # one enormous line
        return _clip(source, limit)
    omitted = len(lines) - len(head) - len(tail)
    return "\n".join(head + [f"// ... [{omitted} lines omitted; every site is shown "
                             f"with its offer below] ..."] + tail)


def _plain(obj: Any) -> Any:
    """JSON-able form of ``obj`` (dataclasses such as Pick become dicts)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _plain(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [_plain(v) for v in obj]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return str(obj)


def _compact(obj: Any, limit: int = 600) -> str:
    if isinstance(obj, str):
        return _clip(obj, limit)
    return _clip(json.dumps(_plain(obj), separators=(", ", ": "), sort_keys=False), limit)


_SUMMARY_ORDER = (("intent", "intent"),
                  ("preconditions", "preconditions that hold at this site"),
                  ("effect", "measured effect"),
                  ("failures_avoided", "failures avoided"))


def _summary_lines(summary: dict) -> list[str]:
    out = []
    seen = set()
    for key, label in _SUMMARY_ORDER:
        if key not in summary:
            continue
        seen.add(key)
        out += _field_lines(label, summary[key])
    for key, value in summary.items():
        if key not in seen:
            out += _field_lines(key.replace("_", " "), value)
    return out


def _field_lines(label: str, value: Any) -> list[str]:
    if value in (None, "", [], {}):
        return [f"  {label}: (none)"]
    if isinstance(value, (list, tuple)):
        return [f"  {label}:"] + [f"    - {_compact(v)}" for v in value[:12]] + (
            [f"    - ... {len(value) - 12} more"] if len(value) > 12 else [])
    return [f"  {label}: {_compact(value)}"]


def describe_offer(offer: Offer) -> str:
    lines = [f"offer {offer.id}: card {offer.card} (pass {offer.pass_name}) "
             f"at {offer.location}"]
    lines += _summary_lines(offer.summary or {})
    snippet = _clip(offer.snippet.rstrip(), MAX_SNIPPET_CHARS)
    lines.append("  site:")
    lines += [f"    | {s}" for s in snippet.splitlines()] or ["    | (empty)"]
    if offer.options:
        lines.append("  options:")
        for oc in offer.options:
            if not oc.values:
                continue
            doc = f" -- {oc.doc}" if oc.doc else ""
            dom = f" (domain: {oc.domain})" if oc.domain else ""
            lines.append(f"    {oc.name}: offered {json.dumps(list(oc.values))}, "
                         f"default {json.dumps(oc.default)}{dom}{doc}")
    else:
        lines.append("  options: none (choose it with \"options\": {})")
    return "\n".join(lines)


_HISTORY_FIRST = ("card", "pass", "location", "site", "options", "spec", "verdict", "stage",
                  "reason", "effect", "speedup_vs_start")
_HISTORY_SKIP = {"n", "state", "gate", "after", "evaluation", "seconds", "rank", "filler",
                 "offer", "rationale", "forced"}


def _history_entry(entry: Any) -> Any:
    """The parts of a tried entry that help a model; what identifies the pick first."""
    if not isinstance(entry, dict):
        return entry
    first = {k: entry[k] for k in _HISTORY_FIRST if k in entry}
    rest = {k: v for k, v in entry.items() if k not in first and k not in _HISTORY_SKIP}
    return {**first, **rest}


def describe_history(tried: list[dict], keep: int = MAX_HISTORY) -> str:
    """The earlier picks (most recent ``keep``), one line each, identity then verdict.

    Offer ids are left out: they belong to the menu of the state the pick was made in.
    """
    if not tried:
        return "No picks tried yet."
    shown = tried[-keep:]
    lines = []
    if len(tried) > keep:
        lines.append(f"({len(tried) - keep} earlier picks not shown)")
    for n, entry in enumerate(shown, len(tried) - len(shown) + 1):
        lines.append(f"{n}. {_compact(_history_entry(entry), 500)}")
    return "\n".join(lines)


def user_prompt(kernel: str, menu: list[Offer], tried: list[dict]) -> str:
    parts = ["Kernel source:", "```cuda", truncate_kernel(kernel), "```", "",
             f"Menu ({len(menu)} offers):"]
    parts += [describe_offer(o) for o in menu]
    parts += ["", "History of picks tried on this kernel (do not repeat them):",
              describe_history(tried), "",
              'Choose one offer and a value for each of its options, or "done". '
              "Reply with the JSON object only."]
    return "\n".join(parts)


# --------------------------------------------------------------------------------------
# the filler


def _strip_fence(text: str) -> str:
    t = text.strip()
    if t.startswith("```") and t.endswith("```") and len(t) >= 6:
        t = t[3:-3]
        first, _, rest = t.partition("\n")
        if first.strip().lower() in ("", "json"):
            t = rest
    return t.strip()


class LLMFiller:
    """A :class:`~kltrans.optimize.menu.Filler` backed by an OpenAI-compatible chat API.

    ``base_url`` defaults to ``OPENAI_BASE_URL`` (else the openai library's default),
    ``api_key`` to ``OPENAI_API_KEY``. The openai client's own retries are off: bad
    replies are retried here (``max_retries``), network errors are raised at once as
    :class:`LLMUnavailable`. ``max_tokens`` is sent only when given (some models refuse it).
    """

    name = "llm"

    def __init__(self, model: str | None, *, base_url: str | None = None,
                 api_key: str | None = None, timeout_s: float = 60.0, max_retries: int = 3,
                 temperature: float = 0.0, max_tokens: int | None = None):
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            raise LLMConfigError("no API key for the LLM filler: set OPENAI_API_KEY "
                                 "(any non-empty value for a local server)")
        if not model:
            raise LLMConfigError("no model for the LLM filler: pass --llm-model NAME")
        if max_retries < 0:
            raise LLMConfigError(f"--llm-retries must be 0 or more, not {max_retries}")
        if timeout_s <= 0:
            raise LLMConfigError(f"--llm-timeout must be positive, not {timeout_s:g}")
        import openai

        self.model = model
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.temperature = temperature
        self.max_tokens = max_tokens
        try:
            self._client = openai.OpenAI(api_key=key, base_url=base_url or None,
                                         timeout=self.timeout_s, max_retries=0)
        except openai.OpenAIError as e:       # e.g. a malformed base URL
            raise LLMConfigError(f"cannot set up the LLM client: {e}") from e
        self.base_url = str(self._client.base_url)
        self.events: list[dict] = []

    # -- one request ----------------------------------------------------------------

    def _event(self, kind: str, reason: str, raw: str | None, latency: float) -> None:
        self.events.append({"kind": kind, "reason": reason,
                            "raw": None if raw is None else _clip(raw, RAW_KEEP),
                            "latency_s": round(latency, 4)})

    def _complete(self, messages: list[dict], rf: dict) -> tuple[str, float]:
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": self.temperature, "response_format": rf}
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        t0 = time.perf_counter()
        where = f"the LLM server at {self.base_url}"
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as e:
            lat = time.perf_counter() - t0
            self._event("error", f"timeout after {lat:.1f} s", None, lat)
            raise LLMUnavailable(f"{where} did not answer within {self.timeout_s:g} s "
                                 f"(--llm-timeout)") from e
        except openai.APIConnectionError as e:
            lat = time.perf_counter() - t0
            cause = e.__cause__ or e
            self._event("error", f"connection: {cause}", None, lat)
            raise LLMUnavailable(f"cannot reach {where}: {cause}") from e
        except openai.APIStatusError as e:
            lat = time.perf_counter() - t0
            msg = _status_message(e)
            self._event("error", f"HTTP {e.status_code}: {msg}", None, lat)
            if e.status_code in (401, 403):
                raise LLMConfigError(f"{where} refused the API key (HTTP {e.status_code}): "
                                     f"{msg}") from e
            if e.status_code == 404:
                raise LLMConfigError(f"{where} has no model {self.model!r} or no chat "
                                     f"completions endpoint (HTTP 404): {msg}") from e
            raise LLMUnavailable(f"{where} answered HTTP {e.status_code}: {msg}") from e
        except openai.OpenAIError as e:      # e.g. a body that is not a chat completion
            lat = time.perf_counter() - t0
            self._event("error", f"{type(e).__name__}: {e}", None, lat)
            raise LLMUnavailable(f"{where} gave an unusable answer: {e}") from e
        lat = time.perf_counter() - t0
        choices = getattr(resp, "choices", None) or []
        if not choices or choices[0].message is None:
            return "", lat
        msg = choices[0].message
        content = msg.content
        if content is None and getattr(msg, "refusal", None):
            return f"(refusal) {msg.refusal}", lat
        return content or "", lat

    # -- parsing --------------------------------------------------------------------

    def parse(self, raw: str, menu: list[Offer], schema: dict) -> tuple[Pick | None, str | None]:
        """(pick or None for done, None) when ``raw`` is a valid reply; (None, why) else."""
        from jsonschema import Draft202012Validator

        text = _strip_fence(raw)
        if not text:
            return None, "the reply is empty"
        if len(text) > MAX_REPLY:
            return None, f"the reply is {len(text)} characters (at most {MAX_REPLY})"
        try:
            data = json.loads(text)
        except ValueError as e:
            return None, f"the reply is not JSON ({e})"
        except RecursionError:
            return None, "the reply is JSON nested too deeply to read"
        try:
            errors = sorted(Draft202012Validator(schema).iter_errors(data),
                            key=lambda e: list(e.absolute_path))
        except RecursionError:
            return None, "the reply is JSON nested too deeply to check"
        if errors:
            return None, "the reply does not match the schema: " + _schema_reason(errors, data, menu)
        choice = data["choice"]
        if choice["offer"] in (DONE, None):
            return None, None
        pick = Pick(offer=choice["offer"], options=dict(choice["options"]),
                    rationale=str(data.get("rationale", "")))
        why = check_pick(pick, menu)
        if why:
            return None, why
        return pick, None

    # -- the Filler protocol --------------------------------------------------------

    def pick(self, kernel: str, menu: list[Offer], tried: list[dict],
             lost: frozenset = frozenset()) -> Pick | None:
        """The model's pick from ``menu``, or None when it says ``done`` (or the menu is
        empty). Raises LLMUnavailable, LLMConfigError or LLMReplyError. ``lost`` is not
        sent: the model sees this state's tries and each card's evidence."""
        if not menu:
            return None
        schema = pick_schema(menu)
        rf = response_format(schema)
        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": user_prompt(kernel, menu, tried)}]
        reasons = []
        for attempt in range(self.max_retries + 1):
            raw, lat = self._complete(messages, rf)
            pick, why = self.parse(raw, menu, schema)
            if why is None:
                self._event("reply", DONE if pick is None else f"pick {pick.offer}", raw, lat)
                return pick
            self._event("rejected", why, raw, lat)
            reasons.append(why)
            messages += [{"role": "assistant", "content": _clip(raw, RAW_KEEP)},
                         {"role": "user", "content": _corrective(why, menu)}]
        raise LLMReplyError(f"the LLM gave no valid pick in {self.max_retries + 1} "
                            f"replies; last: {reasons[-1]}")


def _corrective(why: str, menu: list[Offer]) -> str:
    ids = ", ".join(o.id for o in menu)
    return (f"That reply was rejected: {why}. Reply again with one JSON object only, "
            f'{{"rationale": "...", "choice": {{"offer": ..., "options": {{...}}}}}}, '
            f'where offer is one of {ids} or "done" and every option value is one of the '
            f"values offered for that offer.")


def _schema_reason(errors, data: Any, menu: list[Offer]) -> str:
    """A short, useful reason: name a wrong offer id or option value when that is it."""
    choice = data.get("choice") if isinstance(data, dict) else None
    if isinstance(choice, dict) and isinstance(choice.get("offer"), str):
        pick = Pick(offer=choice["offer"],
                    options=choice["options"] if isinstance(choice.get("options"), dict) else {})
        why = check_pick(pick, menu) if choice["offer"] != DONE else None
        if why:
            return why
    e = errors[0]
    path = "/".join(str(p) for p in e.absolute_path) or "(root)"
    return f"at {path}: {_clip(e.message, 300)}"


def _status_message(e) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return _clip(str(err["message"]), 300)
        return _clip(json.dumps(body), 300)
    return _clip(str(getattr(e, "message", e)), 300)
