"""A chat-completions server on 127.0.0.1, for tests, benchmarks and trying sgam offline.

No model endpoint is reachable from the development machines, so the LLM extractor is
exercised against this: the real protocol over real HTTP, with answers chosen by a
*responder* (a function of the request body) or scripted one by one::

    with LoopbackLLM() as llm:
        llm.script(status(429, retry_after="1"), answer([{...}]))
        extractor = LlmExtractor(base_url=llm.base_url, model="loopback")

Every request body (and its headers) is kept in ``llm.requests`` (``llm.headers``) so
tests can count model calls.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (a slow or hung model)


Responder = Callable[[dict[str, Any]], Reply]


def completion(content: str, *, usage: tuple[int, int] = (0, 0)) -> Reply:
    """A 200 chat-completions answer whose message content is ``content``, reporting
    ``usage`` as (prompt, completion) tokens."""
    body = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "model": "loopback",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }
    return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})


def answer(facts: list[dict[str, Any]], *, usage: tuple[int, int] = (0, 0)) -> Reply:
    return completion(json.dumps({"facts": facts}), usage=usage)


def status(code: int, *, retry_after: str | None = None, text: str = "") -> Reply:
    headers = {"Content-Type": "application/json"}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    body = json.dumps({"error": {"message": text or f"loopback says {code}"}}).encode()
    return Reply(code, body, headers)


def episode_of(request: dict[str, Any]) -> dict[str, Any]:
    """The episode the extractor put in the user message."""
    user = next(m for m in request["messages"] if m["role"] == "user")
    episode: dict[str, Any] = json.loads(user["content"])["episode"]
    return episode


_STATEMENT = re.compile(r"\b([A-Za-z][\w-]*)'s ([a-z][a-z ]*?) is ([\w.:+-]+)")


def rule_responder(request: dict[str, Any]) -> Reply:
    """A stand-in model: each "<name>'s <thing> is <value>" becomes a fact."""
    content = episode_of(request)["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    facts = [
        {
            "subject": name.lower(),
            "subject_type": None,
            "predicate": thing.strip().replace(" ", "_"),
            "value": value.rstrip("."),
            "object": None,
            "object_type": None,
            "valid_from": None,
            "valid_to": None,
            "confidence": 0.9,
            "evidence": m.group(0),
        }
        for m in _STATEMENT.finditer(text)
        for name, thing, value in [m.groups()]
    ]
    return answer(facts)


class LoopbackLLM:
    """The server, in a thread; a context manager."""

    def __init__(self, responder: Responder = rule_responder) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # of each request, in order
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll keeps stop() quick; the server is idle between tests anyway.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with these, in order; then the responder again."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> LoopbackLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()  # releases delayed replies
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            scripted = self._script.popleft() if self._script else None
        return scripted if scripted is not None else self.responder(body)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes: without this, Nagle's
                # algorithm and delayed ACKs add ~40 ms to every answer.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.endswith("/chat/completions"):
                    self._send(status(404))
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(status(400, text="request body is not JSON"))
                    return
                reply = llm._reply(body, {k.lower(): v for k, v in self.headers.items()})
                if reply.delay and llm._closing.wait(reply.delay):
                    return  # shutting down: drop the connection unanswered
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout); nothing to tell it

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test and bench output clean

        return Handler
