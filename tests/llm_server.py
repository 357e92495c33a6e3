"""A small OpenAI-compatible chat server on 127.0.0.1 for the LLM filler's tests.

Real HTTP (``http.server.ThreadingHTTPServer`` in a thread, port 0) that the real
``openai`` client talks to. ``POST /v1/chat/completions`` answers according to a queue
of scripted behaviours (``server.script(...)``); when the queue is empty it uses
``server.default``. Behaviours:

- ``"valid"``: a correct pick computed from the request's json_schema (the first offer id
  enumerated in the schema, the first offered value of each of its options; with
  ``server.rotate`` the n-th valid reply takes the n-th offer, cyclically);
- ``("json", text)``: ``text`` verbatim as the reply content;
- ``"malformed"``: a reply that is not JSON;
- ``"out-of-menu"``: an offer id not on the menu; ``"out-of-menu-value"``: the first
  offer with a value not offered for one of its options;
- ``"slow"``: sleeps ``server.slow_s`` seconds before a valid reply (longer than the
  client's timeout);
- ``"http500"``: HTTP 500 with an OpenAI-style error body; ``"http401"``: HTTP 401 (key
  refused);
- ``"done"``: the model chooses to stop.

Every request is recorded in ``server.requests`` (method, path, headers, parsed body).
``GET /v1/models`` lists ``server.models``.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BEHAVIOURS = ("valid", "json", "malformed", "out-of-menu", "out-of-menu-value", "slow",
              "http500", "http401", "done")


def _branches(body: dict) -> list[dict]:
    """The per-offer branches of the pick schema sent in ``body`` (done excluded)."""
    rf = body.get("response_format") or {}
    schema = (rf.get("json_schema") or {}).get("schema") or {}
    anyof = schema.get("properties", {}).get("choice", {}).get("anyOf", [])
    return [b for b in anyof if "done" not in b["properties"]["offer"]["enum"]]


def _valid_pick(body: dict, k: int = 0) -> dict:
    branches = _branches(body)
    if not branches:
        return {"rationale": "nothing to choose", "choice": {"offer": "done", "options": {}}}
    b = branches[k % len(branches)]
    opts = {name: spec["enum"][0]
            for name, spec in b["properties"]["options"]["properties"].items()}
    return {"rationale": "first offer, first values",
            "choice": {"offer": b["properties"]["offer"]["enum"][0], "options": opts}}


class LLMServer:
    def __init__(self, default="valid", slow_s: float = 5.0, models=("test",)):
        self.default = default
        self.rotate = False            # valid replies walk through the offers in turn
        self.valid_served = 0
        self.slow_s = slow_s
        self.models = list(models)
        self.requests: list[dict] = []
        self._queue: collections.deque = collections.deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()               # releases slow handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def script(self, *behaviours) -> None:
        """Queue behaviours for the next requests (a name, or ("json", text))."""
        with self._lock:
            for b in behaviours:
                name = b[0] if isinstance(b, tuple) else b
                if name not in BEHAVIOURS:
                    raise ValueError(f"unknown behaviour {b!r}")
                self._queue.append(b)

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def _next(self):
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    # -- the handler ----------------------------------------------------------------

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):        # keep test output quiet
                pass

            def _send(self, status: int, obj: dict) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass                          # the client gave up (timeout)

            def _record(self, body) -> None:
                with server._lock:
                    server.requests.append({"method": self.command, "path": self.path,
                                            "headers": dict(self.headers), "body": body})

            def do_GET(self):
                self._record(None)
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"}
                        for m in server.models]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}",
                                               "type": "invalid_request_error"}})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                self._record(body)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}",
                                               "type": "invalid_request_error"}})
                    return
                behaviour = server._next()
                name = behaviour[0] if isinstance(behaviour, tuple) else behaviour
                if name == "http500":
                    self._send(500, {"error": {"message": "scripted internal error",
                                               "type": "server_error"}})
                    return
                if name == "http401":
                    self._send(401, {"error": {"message": "scripted: invalid API key",
                                               "type": "invalid_request_error"}})
                    return
                if name == "slow":
                    server._stop.wait(server.slow_s)
                    content = json.dumps(_valid_pick(body))
                elif name == "valid":
                    with server._lock:
                        k = server.valid_served if server.rotate else 0
                        server.valid_served += 1
                    content = json.dumps(_valid_pick(body, k))
                elif name == "json":
                    content = behaviour[1]
                elif name == "malformed":
                    content = "Sure! I would pick offer o1 with factor 4."
                elif name == "out-of-menu":
                    content = json.dumps({"rationale": "made up",
                                          "choice": {"offer": "o999", "options": {}}})
                elif name == "out-of-menu-value":
                    pick = _valid_pick(body)
                    opts = pick["choice"]["options"]
                    if opts:
                        opts[next(iter(opts))] = 987654321
                    pick["choice"]["offer"] = pick["choice"]["offer"] if opts else "o999"
                    content = json.dumps(pick)
                else:                              # done
                    content = json.dumps({"rationale": "nothing left worth trying",
                                          "choice": {"offer": "done", "options": {}}})
                self._send(200, {
                    "id": f"chatcmpl-test{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })

        return Handler
