#!/usr/bin/env python3
"""A scripted stand-in for the Gemini API (`generateContent`,
`streamGenerateContent?alt=sse`, `countTokens`), on loopback only, for
Gemini CLI (`GOOGLE_GEMINI_BASE_URL`).  Same idea as mock_anthropic.py:
each request that offers the shell tool (`run_shell_command`) is answered
with one `functionCall` running the next route's command — or, for a route
with "tool", that tool with the route's `input` (`{"tool": "read_file",
"input": {"file_path": …}}`) — found from the request (which of our call
ids already have a `functionResponse`); then a final text.  A request
without the shell tool (a JSON side question such as the next-speaker
check) gets a short JSON or text answer.  Every request is appended to a
JSONL log.

Gemini CLI keeps the id of a `functionCall` (prefixed with the tool's name
and `__`); the ids carry the route index.

Our own test code; nothing here is taken from the client.
"""

import http.server
import json
import threading
import time
import urllib.parse
import uuid

CALL_MARK = "agentloop_"
SHELL_NAMES = ("run_shell_command",)


def route_index_of(call_id):
    """Index of the route a call id was minted for (`…agentloop_NNN_…`)."""
    if not isinstance(call_id, str) or CALL_MARK not in call_id:
        return None
    try:
        return int(call_id.split(CALL_MARK, 1)[1].split("_", 1)[0])
    except ValueError:
        return None


def tool_names(tools):
    out = set()
    for t in tools or []:
        if isinstance(t, dict):
            for d in t.get("functionDeclarations") or []:
                if isinstance(d, dict) and d.get("name"):
                    out.add(d["name"])
    return out


def answered(contents):
    done = set()
    for c in contents or []:
        for p in (c or {}).get("parts") or []:
            fr = p.get("functionResponse") if isinstance(p, dict) else None
            if isinstance(fr, dict):
                i = route_index_of(fr.get("id"))
                if i is not None:
                    done.add(i)
    return done


def next_part(routes, body):
    """(part, note) of the answer to one request."""
    names = tool_names(body.get("tools"))
    shell = next((n for n in SHELL_NAMES if n in names), None)
    if shell is None:
        gc = body.get("generationConfig") or body.get("config") or {}
        if "json" in str(gc.get("responseMimeType") or ""):
            text = json.dumps({"reasoning": "agentloop mock", "next_speaker": "user",
                               "model_choice": "flash", "complexity_reasoning": "agentloop",
                               "complexity_score": 1})
        else:
            text = "ok"
        return {"text": text}, {"text": text}
    done = answered(body.get("contents"))
    for i, route in enumerate(routes):
        if i in done:
            continue
        call_id = "%s%03d_%s" % (CALL_MARK, i, uuid.uuid4().hex[:8])
        if route.get("tool"):
            name, args = route["tool"], dict(route.get("input") or {})
        else:
            name, args = shell, {"command": route["command"],
                                 "description": "agentloop route " + route["name"]}
        return ({"functionCall": {"id": call_id, "name": name, "args": args}},
                {"route": i, "tool": name, "args": args})
    return {"text": "agentloop: script done"}, {"text": "agentloop: script done"}


def response(part):
    return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 20, "totalTokenCount": 32},
            "modelVersion": "gemini-agentloop"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _record(self, body, note=None):
        parsed = urllib.parse.urlsplit(self.path)
        rec = {"t": time.time(), "method": self.command, "path": parsed.path, "query": parsed.query,
               "headers": {k.lower(): v for k, v in self.headers.items()
                           if k.lower() not in ("authorization", "x-goog-api-key", "cookie")},
               "body": body, "answer": note}
        with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._record(None)
        self._json(200, {"models": []})

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = urllib.parse.urlsplit(self.path).path
        if path.endswith(":countTokens"):
            self._record(body, "countTokens")
            self._json(200, {"totalTokens": max(1, len(raw) // 4)})
            return
        if not (path.endswith(":generateContent") or path.endswith(":streamGenerateContent")) \
                or not isinstance(body, dict):
            self._record(body, "other")
            self._json(200, {})
            return
        part, note = next_part(self.server.routes, body)
        self._record(body, note)
        obj = response(part)
        if path.endswith(":generateContent"):
            self._json(200, obj)
            return
        data = ("data: %s\r\n\r\n" % json.dumps(obj)).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(routes, log_path):
    srv = Server(("127.0.0.1", 0), Handler)
    srv.routes, srv.log_path = routes, log_path
    srv.log_lock = threading.Lock()
    return srv
