"""The LLM filler against a real OpenAI-compatible server on loopback (tests/llm_server.py).

Real HTTP and the real ``openai`` client; menus are built by hand. The filler has no gate:
a rejected reply can only show up in its events and in the requests the server saw.
"""

import json
import socket
import time

import pytest

from kltrans.optimize.llm import (LLMConfigError, LLMFiller, LLMReplyError, LLMUnavailable,
                                  truncate_kernel)
from kltrans.optimize.menu import Offer, OptionChoice, Pick

KERNEL = """\
__global__ void scale(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""


def make_menu():
    return [
        Offer(id="o1", card="vectorize-access", pass_name="vectorize-access", site=0,
              location="scale.cu:3:16", snippet="if (i < n) y[i] = a * x[i];",
              options=(OptionChoice("width", (4, 2), 4, doc="elements per access",
                                    domain="one of 2, 4"),
                       OptionChoice("tail", ("scalar", "masked"), "scalar")),
              score=2.5,
              summary={"intent": "Load and store float4 instead of four floats.",
                       "preconditions": ["aligned(x,16): holds (gate guarantees it)",
                                         "no_alias(x,y): holds"],
                       "effect": [{"workload": "saxpy", "speedup": 1.31}],
                       "failures_avoided": [{"workload": "transpose",
                                             "precondition": "contiguous-index",
                                             "stage": "correct"}]}),
        Offer(id="o2", card="grid-stride", pass_name="grid-stride", site=0,
              location="scale.cu:2:5", snippet="int i = blockIdx.x * blockDim.x + threadIdx.x;",
              options=(OptionChoice("blocks", (256, 1024), 1024),), score=1.0,
              summary={"intent": "Turn the one-thread-per-element kernel into a grid-stride loop."}),
        Offer(id="o3", card="add-launch-bounds", pass_name="add-launch-bounds", site=0,
              location="scale.cu:1:1", snippet="__global__ void scale(", score=0.5,
              summary={"intent": "Declare __launch_bounds__ for the block size used."}),
    ]


def filler(server, **kw):
    kw.setdefault("timeout_s", 10)
    return LLMFiller("test", base_url=server.base_url, **kw)


def kinds(f):
    return [e["kind"] for e in f.events]


def test_valid_reply_is_the_pick(llm_server):
    llm_server.script("valid")
    f = filler(llm_server)
    pick = f.pick(KERNEL, make_menu(), [])
    assert pick == Pick(offer="o1", options={"width": 4, "tail": "scalar"},
                        rationale="first offer, first values")
    assert kinds(f) == ["reply"]
    assert f.events[0]["latency_s"] >= 0 and '"o1"' in f.events[0]["raw"]
    (req,) = llm_server.chat_requests()
    assert req["headers"]["Authorization"] == "Bearer sk-loopback-test"
    assert req["body"]["model"] == "test" and req["body"]["temperature"] == 0


def test_request_carries_the_strict_schema_of_exactly_the_menu(llm_server):
    llm_server.script("valid")
    filler(llm_server).pick(KERNEL, make_menu(), [])
    rf = llm_server.chat_requests()[0]["body"]["response_format"]
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "pick" and rf["json_schema"]["strict"] is True
    branches = rf["json_schema"]["schema"]["properties"]["choice"]["anyOf"]
    ids = [b["properties"]["offer"]["enum"] for b in branches]
    assert ids == [["o1"], ["o2"], ["o3"], ["done", None]]
    o1 = branches[0]["properties"]["options"]
    assert o1["properties"]["width"]["enum"] == [4, 2]
    assert o1["properties"]["tail"]["enum"] == ["scalar", "masked"]
    assert o1["required"] == ["width", "tail"] and o1["additionalProperties"] is False
    assert branches[2]["properties"]["options"]["properties"] == {}


def test_prompt_shows_kernel_offers_and_rules(llm_server):
    llm_server.script("valid")
    filler(llm_server).pick(KERNEL, make_menu(), [])
    system, user = llm_server.chat_requests()[0]["body"]["messages"]
    assert system["role"] == "system" and "Never write or modify code" in system["content"]
    assert "JSON" in system["content"]
    text = user["content"]
    assert KERNEL.strip() in text
    for needle in ("offer o1: card vectorize-access", "scale.cu:3:16",
                   "if (i < n) y[i] = a * x[i];", "Load and store float4",
                   "aligned(x,16): holds", '"speedup": 1.31', "contiguous-index",
                   'width: offered [4, 2], default 4', 'tail: offered ["scalar", "masked"]',
                   "offer o3: card add-launch-bounds", "No picks tried yet."):
        assert needle in text, needle


def test_history_of_tried_picks_is_in_the_prompt(llm_server):
    llm_server.script("valid")
    tried = [{"card": "vectorize-access", "location": "scale.cu:3:16",
              "options": {"width": 4, "tail": "scalar"},
              "verdict": "rejected at correct: max rel err 3.1e-02"},
             {"pick": Pick("o2", {"blocks": 256}), "verdict": "accepted 1.12x"}]
    filler(llm_server).pick(KERNEL, make_menu(), tried)
    text = llm_server.chat_requests()[0]["body"]["messages"][1]["content"]
    assert "No picks tried yet." not in text
    assert "rejected at correct: max rel err 3.1e-02" in text
    assert '"blocks": 256' in text and "accepted 1.12x" in text


def test_malformed_then_valid_rejects_once_then_picks(llm_server):
    llm_server.script("malformed", "valid")
    f = filler(llm_server)
    pick = f.pick(KERNEL, make_menu(), [])
    assert pick is not None and pick.offer == "o1"
    assert kinds(f) == ["rejected", "reply"]
    assert "not JSON" in f.events[0]["reason"]
    assert f.events[0]["raw"].startswith("Sure! I would pick")
    reqs = llm_server.chat_requests()
    assert len(reqs) == 2
    # the retry carries the bad reply and a corrective message naming the reason
    retry = reqs[1]["body"]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"].startswith("Sure! I would pick")
    assert "rejected" in retry[3]["content"] and "not JSON" in retry[3]["content"]


@pytest.mark.parametrize("behaviour, reason", [
    ("out-of-menu", "offer 'o999' is not on the menu (o1, o2, o3)"),
    ("out-of-menu-value", "option width=987654321 of offer o1 (vectorize-access) is not one "
                          "of the values offered [4, 2]"),
])
def test_out_of_menu_reply_is_rejected(llm_server, behaviour, reason):
    llm_server.script(behaviour, "valid")
    f = filler(llm_server)
    pick = f.pick(KERNEL, make_menu(), [])
    assert pick.offer == "o1" and pick.options == {"width": 4, "tail": "scalar"}
    assert kinds(f) == ["rejected", "reply"]
    assert reason in f.events[0]["reason"]


def test_reply_ignoring_the_schema_is_rejected(llm_server):
    # a server that ignores response_format: JSON, but not the schema's shape
    llm_server.script(("json", json.dumps({"offer": "o1", "options": {"width": 4}})),
                      ("json", json.dumps({"rationale": "", "choice": {
                          "offer": "o3", "options": {"width": 4}}})),
                      "valid")
    f = filler(llm_server)
    assert f.pick(KERNEL, make_menu(), []).offer == "o1"
    assert kinds(f) == ["rejected", "rejected", "reply"]
    assert "does not match the schema" in f.events[0]["reason"]
    assert "offer o3 (add-launch-bounds) has no option 'width'" in f.events[1]["reason"]


def test_fenced_json_is_accepted(llm_server):
    reply = {"rationale": "wider loads", "choice": {"offer": "o2", "options": {"blocks": 256}}}
    llm_server.script(("json", "```json\n" + json.dumps(reply) + "\n```"))
    f = filler(llm_server)
    assert f.pick(KERNEL, make_menu(), []) == Pick("o2", {"blocks": 256}, "wider loads")


def test_max_retries_exhausted_raises(llm_server):
    llm_server.script("malformed", "out-of-menu", "malformed", "valid")
    f = filler(llm_server, max_retries=2)
    with pytest.raises(LLMReplyError, match="no valid pick in 3 replies; last: the reply is not JSON"):
        f.pick(KERNEL, make_menu(), [])
    assert kinds(f) == ["rejected"] * 3
    assert len(llm_server.chat_requests()) == 3      # the queued valid reply was never asked for


@pytest.mark.parametrize("reply", [
    "done",
    ("json", json.dumps({"rationale": "stop", "choice": {"offer": None, "options": {}}})),
])
def test_done_means_stop(llm_server, reply):
    llm_server.script(reply)
    f = filler(llm_server)
    assert f.pick(KERNEL, make_menu(), []) is None
    assert kinds(f) == ["reply"] and f.events[0]["reason"] == "done"


def test_empty_menu_asks_nothing(llm_server):
    assert filler(llm_server).pick(KERNEL, [], []) is None
    assert llm_server.requests == []


def test_slow_server_is_unavailable_within_the_timeout(llm_server):
    llm_server.slow_s = 20
    llm_server.script("slow")
    f = filler(llm_server, timeout_s=0.5)
    t0 = time.monotonic()
    with pytest.raises(LLMUnavailable, match="did not answer within 0.5 s"):
        f.pick(KERNEL, make_menu(), [])
    assert time.monotonic() - t0 < 5
    assert kinds(f) == ["error"] and "timeout" in f.events[0]["reason"]
    assert len(llm_server.chat_requests()) == 1      # the client does not retry by itself


def test_http_500_is_unavailable_without_client_retries(llm_server):
    llm_server.script("http500", "valid")
    f = filler(llm_server)
    with pytest.raises(LLMUnavailable, match="HTTP 500: scripted internal error"):
        f.pick(KERNEL, make_menu(), [])
    assert kinds(f) == ["error"]
    assert len(llm_server.chat_requests()) == 1


def test_connection_refused_is_unavailable(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                         # nothing listens there now
    f = LLMFiller("test", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=5)
    with pytest.raises(LLMUnavailable, match=f"cannot reach the LLM server at "
                                             f"http://127.0.0.1:{port}/v1"):
        f.pick(KERNEL, make_menu(), [])
    assert kinds(f) == ["error"]


def test_missing_key_or_model_is_a_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="set OPENAI_API_KEY"):
        LLMFiller("test", base_url="http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(LLMConfigError, match="--llm-model"):
        LLMFiller(None, base_url="http://127.0.0.1:9/v1")


def test_base_url_defaults_to_the_environment(llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    llm_server.script("valid")
    f = LLMFiller("test", timeout_s=10)
    assert f.pick(KERNEL, make_menu(), []).offer == "o1"
    assert len(llm_server.chat_requests()) == 1


def test_refused_key_is_a_config_error(llm_server):
    llm_server.script("http401")
    with pytest.raises(LLMConfigError, match="refused the API key"):
        filler(llm_server).pick(KERNEL, make_menu(), [])


def test_server_lists_models_to_the_openai_client(llm_server):
    import openai

    client = openai.OpenAI(base_url=llm_server.base_url, max_retries=0, timeout=10)
    assert [m.id for m in client.models.list()] == ["test"]


def test_long_kernel_is_shown_head_and_tail():
    lines = [f"    acc += x[{i}] * w[{i}];" for i in range(3000)]
    src = "__global__ void big(float* x, float* w) {\n" + "\n".join(lines) + "\n}\n"
    out = truncate_kernel(src, limit=4000)
    assert len(out) < 4200
    assert out.startswith("__global__ void big(") and out.rstrip().endswith("}")
    omitted = int(out.split("// ... [")[1].split(" lines omitted")[0])
    assert omitted == src.count("\n") - (out.count("\n"))  # the marker replaces exactly those
    assert truncate_kernel(KERNEL, limit=4000) == KERNEL


# -------------------------------------------------------------------------------------
# end to end: `kltrans optimize --filler llm` against the loopback server, CPU backend

HELDOUT = "corpus/heldout/gelu"


def optimize(server, *extra, env=None):
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "kltrans", "optimize", f"{HELDOUT}/naive.cu",
           "--workload", HELDOUT, "--filler", "llm", "--llm-base-url", server.base_url,
           "--llm-model", "test", "--budget", "3", "--backend", "cpu", "--json", "-q", *extra]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300,
                          env=env if env is not None else dict(os.environ))


def replies(doc):
    """The (offer, options) of each accepted LLM reply, in order."""
    return [json.loads(e["raw"])["choice"] for e in doc["events"]
            if e.get("filler") == "llm" and e["kind"] == "reply"]


def test_optimize_with_the_llm_filler_end_to_end(llm_server):
    llm_server.rotate = True                 # a different offer each time
    r = optimize(llm_server)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["config"]["filler"] == "llm"
    assert doc["termination"]["kind"] == "budget"
    assert doc["final"]["evaluations"] == 3
    gated = [c for c in doc["candidates"] if "evaluation" in c]
    assert len(gated) == 3 and all(c["filler"] == "llm" for c in gated)
    # every gated candidate is exactly what the model chose: that offer's card, those values
    chosen = replies(doc)
    assert len(chosen) == len(doc["candidates"])
    reqs = llm_server.chat_requests()
    assert len(reqs) == len(chosen)
    for cand, choice, req in zip(doc["candidates"], chosen, reqs):
        assert cand["offer"] == choice["offer"] and cand["options"] == choice["options"]
        text = req["body"]["messages"][1]["content"]
        assert f"offer {choice['offer']}: card {cand['card']} " in text
        assert req["body"]["response_format"]["json_schema"]["strict"] is True
    assert all(c["verdict"] in ("accepted", "rejected") for c in gated)


def test_optimize_rejected_replies_spend_no_evaluation(llm_server):
    llm_server.rotate = True
    llm_server.script("malformed", "out-of-menu")
    r = optimize(llm_server, "--budget", "2")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    llm = [e for e in doc["events"] if e.get("filler") == "llm"]
    assert [e["kind"] for e in llm][:3] == ["rejected", "rejected", "reply"]
    assert doc["final"]["evaluations"] == 2
    # no candidate was made from a rejected reply: one candidate per accepted reply
    assert len(doc["candidates"]) == len(replies(doc))
    assert len(llm_server.chat_requests()) == len(llm)


def test_optimize_llm_unavailable_stops_or_falls_back(llm_server, tmp_path):
    llm_server.default = "http500"
    out = tmp_path / "out.cu"
    r = optimize(llm_server, "-o", str(out))
    assert r.returncode == 1, r.stderr  # reported and stopped: not a success
    assert "--fallback builtin" in r.stderr
    # a failed run writes no kernel (as a compiler that stops on an error)
    assert not out.exists() and "no kernel written" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["termination"]["kind"] == "llm-unavailable"
    assert "HTTP 500" in doc["termination"]["reason"]
    assert doc["final"]["evaluations"] == 0 and doc["candidates"] == []

    r = optimize(llm_server, "--fallback", "builtin")
    assert r.returncode == 0, r.stderr
    # the switch is said on stderr, not only in the log's events
    assert "warning: the llm filler failed" in r.stderr and "HTTP 500" in r.stderr
    doc = json.loads(r.stdout)
    failed = [e for e in doc["events"] if e["kind"] == "filler-failed"]
    assert len(failed) == 1 and "HTTP 500" in failed[0]["reason"]
    assert {"kind": "fallback", "to": "builtin"} in doc["events"]
    assert doc["final"]["evaluations"] == 3
    assert {c["filler"] for c in doc["candidates"]} == {"builtin"}


def test_optimize_without_key_is_a_usage_error(llm_server):
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    r = optimize(llm_server, env=env)
    assert r.returncode == 2
    assert r.stderr.startswith("kltrans: error: no API key") and "OPENAI_API_KEY" in r.stderr
    assert "Traceback" not in r.stderr
    assert llm_server.requests == []


def test_optimize_tune_last_with_the_llm_filler(llm_server):
    """--tune-last with the LLM filler: the model sees the other cards' offers first; when
    it chooses to stop there, the tuning phase begins and the next menu holds only the
    tuning cards' offers (retrieve.small_effect), whose pick is gated."""
    import re

    from kltrans.optimize.retrieve import load_library, small_effect

    tuning = {c.id for c in load_library("skills") if small_effect(c.data)}
    llm_server.script("done")
    r = optimize(llm_server, "--tune-last", "--budget", "1")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["config"]["tune_last"] is True
    assert [e["kind"] for e in doc["events"] if e["kind"] == "tuning-phase"] == \
        ["tuning-phase"]
    menus = [set(re.findall(r"offer o\d+: card (\S+) ", req["body"]["messages"][1]["content"]))
             for req in llm_server.chat_requests()]
    assert len(menus) == 2 and menus[0] and menus[1]
    assert not menus[0] & tuning and menus[1] <= tuning
    [gated] = [c for c in doc["candidates"] if "evaluation" in c]
    assert gated["phase"] == "tuning" and gated["card"] in menus[1]


def test_a_reply_nested_too_deeply_or_too_long_is_rejected_not_raised(llm_server):
    deep = "[" * 30000 + "]" * 30000  # under the length bound, past any recursion limit
    llm_server.script(("json", deep), ("json", json.dumps({"rationale": "x" * 70000})),
                      ("json", json.dumps({"rationale": "", "choice": {
                          "offer": "o1", "options": {"width": 4.0, "tail": "scalar"}}})),
                      "valid")
    f = filler(llm_server, max_retries=4)
    assert f.pick(KERNEL, make_menu(), []).offer == "o1"
    assert kinds(f) == ["rejected", "rejected", "rejected", "reply"]
    assert "nested too deeply" in f.events[0]["reason"]
    assert "characters (at most" in f.events[1]["reason"]
    assert "not one of the values offered" in f.events[2]["reason"]
