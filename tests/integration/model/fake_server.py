#!/usr/bin/env python3
"""Fake model server for the model client and agent loop tests.

Listens on 127.0.0.1 with an ephemeral port, prints the port on stdout, and
serves until stdin is closed (the test holds a pipe) or it is killed.

Requests go to /<scenario>/v1/chat/completions (OpenAI shape) or
/<scenario>/v1/messages (Anthropic shape); the scenario picks a recorded
answer.  GET /<scenario>/last returns the last request seen for it as
{"headers": {lower-case name: value}, "body": <parsed JSON>, "count": N}.

The stream shapes follow the endpoints' documented formats: see the header
comment of test_model.c for the list.  Python standard library only.
"""
import gzip
import http.server
import json
import socketserver
import sys
import threading
import time

LOCK = threading.Lock()
COUNTS = {}
LAST = {}
INFLIGHT = {}
MAX_INFLIGHT = {}
RAMP = threading.Condition(threading.Lock())


def chunk(obj):
    return "data: " + json.dumps(obj, ensure_ascii=False) + "\n\n"


def oa(delta, finish=None, usage=None, choices=True, extra=None):
    c = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
         "model": "m", "choices": []}
    if choices:
        ch = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        if extra:
            ch.update(extra)
        c["choices"] = [ch]
    if usage is not None:
        c["usage"] = usage
    return chunk(c)


USAGE = {"prompt_tokens": 31, "completion_tokens": 7, "total_tokens": 38}

# OpenAI: role delta, split content, finish, separate usage chunk
# (stream_options.include_usage), keep-alive comments, [DONE].
OPENAI_TEXT = [
    ": keep-alive\n\n",
    oa({"role": "assistant", "content": ""}),
    oa({"content": "Hel"}),
    ": ping\n\n",
    oa({"content": "lo, w"}),
    oa({"content": "orld"}),
    oa({}, finish="stop"),
    oa(None, usage=USAGE, choices=False),
    "data: [DONE]\n\n",
]

# OpenAI parallel tool calls: the first delta of each call has id, type and
# name with empty arguments; later deltas carry only index + argument pieces,
# split mid-token and (at the byte level, below) mid-UTF-8.
ARGS0 = '{"path": "caf\u00e9/\u65e5\u672c.txt", "n": 10}'
ARGS1 = '{"todos": [{"title": "x", "status": "done"}]}'
OPENAI_TOOLS = [
    oa({"role": "assistant", "content": None,
        "tool_calls": [{"index": 0, "id": "call_A", "type": "function",
                        "function": {"name": "Read", "arguments": ""}}]}),
    oa({"tool_calls": [{"index": 0, "function": {"arguments": ARGS0[:3]}}]}),
    oa({"tool_calls": [{"index": 0, "function": {"arguments": ARGS0[3:14]}}]}),
    oa({"tool_calls": [{"index": 0, "function": {"arguments": ARGS0[14:]}}]}),
    oa({"tool_calls": [{"index": 1, "id": "call_B", "type": "function",
                        "function": {"name": "TodoList", "arguments": ""}}]}),
    oa({"tool_calls": [{"index": 1, "function": {"arguments": ARGS1[:17]}}]}),
    oa({"tool_calls": [{"index": 1, "function": {"arguments": ARGS1[17:]}}]}),
    oa({}, finish="tool_calls"),
    oa(None, usage=USAGE, choices=False),
    "data: [DONE]\n\n",
]

# DeepSeek (deepseek-reasoner): reasoning_content deltas before content; the
# usage comes in the last chunk together with finish_reason.
DEEPSEEK = [
    oa({"role": "assistant", "content": None, "reasoning_content": ""}),
    oa({"content": None, "reasoning_content": "Think"}),
    oa({"content": None, "reasoning_content": "ing."}),
    oa({"content": "Answer", "reasoning_content": None}),
    oa({"content": ""}, finish="stop",
       usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
              "prompt_cache_hit_tokens": 0, "completion_tokens_details": {"reasoning_tokens": 3}}),
    "data: [DONE]\n\n",
]

# Moonshot/Kimi: usage inside choices[0] of the final chunk.
MOONSHOT = [
    oa({"role": "assistant", "content": ""}),
    oa({"content": "Kimi"}),
    oa({}, finish="stop",
       extra={"usage": {"prompt_tokens": 19, "completion_tokens": 13, "total_tokens": 32}}),
    "data: [DONE]\n\n",
]

# llama.cpp server: the tool call id and name only in the first delta, later
# deltas have index and arguments only; no usage chunk.  vLLM/OpenRouter
# style "reasoning" field for thinking.
LLAMACPP = [
    oa({"role": "assistant", "content": None, "reasoning": "plan"}),
    oa({"tool_calls": [{"index": 0, "id": "llama1", "type": "function",
                        "function": {"name": "Glob", "arguments": "{\"pat"}}]}),
    oa({"tool_calls": [{"index": 0, "function": {"arguments": "tern\": \"*.c\"}"}}]}),
    oa({}, finish="tool_calls"),
    "data: [DONE]\n\n",
]

# Ollama (/v1 compatibility): whole tool calls in one chunk, no "index",
# then a finish chunk; usage in the final chunk.
OLLAMA = [
    oa({"role": "assistant", "content": "",
        "tool_calls": [{"id": "call_o1", "type": "function",
                        "function": {"name": "Glob", "arguments": "{\"pattern\":\"*.md\"}"}},
                       {"id": "call_o2", "type": "function",
                        "function": {"name": "Grep", "arguments": "{\"pattern\":\"x\"}"}}]}),
    oa({"role": "assistant", "content": ""}, finish="tool_calls",
       usage={"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}),
    "data: [DONE]\n\n",
]

# CRLF line endings, one event's JSON spread over two data: lines, an
# "event:" and an "id:" field, and a last event without the closing blank
# line (dispatched at end of stream, as the SSE rules say).
CRLF = [
    oa({"role": "assistant", "content": "A"}).replace("\n", "\r\n"),
    'event: message\r\nid: 7\r\ndata: {"choices":[{"index":0,\r\ndata: "delta":{"content":"B"},"finish_reason":"stop"}]}\r\n\r\n',
    'data: [DONE]',
]

# WHATWG SSE: a bare CR ends a line like LF and CRLF do. The same events
# with CR only, then mixed CR / LF / CRLF; "crsplit" cuts the CRLF stream
# between each CR and its LF (separate HTTP chunks, separate TCP reads).
MULTILINE_B = ('event: message\ndata: {"choices":[{"index":0,\n'
               'data: "delta":{"content":"B"},"finish_reason":null}]}\n\n')
BARECR = [
    ": hello\r\r",
    oa({"role": "assistant", "content": "A"}).replace("\n", "\r"),
    MULTILINE_B.replace("\n", "\r"),
    oa({}, finish="stop").replace("\n", "\r"),
    "data: [DONE]\r\r",
]
MIXED = [
    ": hello\r\n\r",
    oa({"role": "assistant", "content": "A"}).replace("\n\n", "\r\n\n"),
    MULTILINE_B.replace("\n", "\r", 1).replace("\n\n", "\r\n\r"),
    oa({}, finish="stop").replace("\n\n", "\n\r"),
    "data: [DONE]\n\r\n",
]
CRLF_SPLIT = [ev.replace("\n", "\r\n") for ev in
              [": hello\n\n", oa({"role": "assistant", "content": "A"}), MULTILINE_B,
               oa({}, finish="stop"), "data: [DONE]\n\n"]]

MALFORMED = [
    oa({"role": "assistant", "content": "ok"}),
    'data: {"choices":[{"delta":{"content":"x"}\n\n',
    oa({}, finish="stop"),
    "data: [DONE]\n\n",
]

OPENAI_BODY = {
    "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "finish_reason": "tool_calls",
                 "message": {"role": "assistant", "content": "Let me look.",
                             "tool_calls": [{"id": "call_9", "type": "function",
                                             "function": {"name": "Read",
                                                          "arguments": "{\"path\":\"a.txt\"}"}}]}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20},
}


def text_turn(t):
    """An OpenAI stream answering text t (finish "stop")."""
    return [oa({"role": "assistant", "content": t}), oa({}, finish="stop"), "data: [DONE]\n\n"]


def tool_call_turn(name, args, call_id="call_0"):
    """An OpenAI stream calling tool name with args (a dict) as call_id."""
    return [oa({"role": "assistant", "content": None, "tool_calls": [
        {"index": 0, "id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}]}),
        oa({}, finish="tool_calls"), "data: [DONE]\n\n"]


def an(event, obj):
    return "event: " + event + "\ndata: " + json.dumps(obj) + "\n\n"


# Anthropic Messages streaming, as documented: message_start with usage,
# thinking block (thinking_delta, signature_delta), text block, ping,
# tool_use block with input_json_delta pieces, message_delta with
# stop_reason and output usage, message_stop.
ANTHROPIC_STREAM = [
    an("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude",
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 1}}}),
    an("content_block_start", {"type": "content_block_start", "index": 0,
                               "content_block": {"type": "thinking", "thinking": ""}}),
    an("content_block_delta", {"type": "content_block_delta", "index": 0,
                               "delta": {"type": "thinking_delta", "thinking": "Hmm."}}),
    an("content_block_delta", {"type": "content_block_delta", "index": 0,
                               "delta": {"type": "signature_delta", "signature": "sig"}}),
    an("content_block_stop", {"type": "content_block_stop", "index": 0}),
    an("content_block_start", {"type": "content_block_start", "index": 1,
                               "content_block": {"type": "text", "text": ""}}),
    an("ping", {"type": "ping"}),
    an("content_block_delta", {"type": "content_block_delta", "index": 1,
                               "delta": {"type": "text_delta", "text": "Checking "}}),
    an("content_block_delta", {"type": "content_block_delta", "index": 1,
                               "delta": {"type": "text_delta", "text": "the weather."}}),
    an("content_block_stop", {"type": "content_block_stop", "index": 1}),
    an("content_block_start", {"type": "content_block_start", "index": 2,
                               "content_block": {"type": "tool_use", "id": "toolu_01",
                                                 "name": "get_weather", "input": {}}}),
    an("content_block_delta", {"type": "content_block_delta", "index": 2,
                               "delta": {"type": "input_json_delta", "partial_json": ""}}),
    an("content_block_delta", {"type": "content_block_delta", "index": 2,
                               "delta": {"type": "input_json_delta", "partial_json": "{\"loc"}}),
    an("content_block_delta", {"type": "content_block_delta", "index": 2,
                               "delta": {"type": "input_json_delta",
                                         "partial_json": "ation\": \"Par"}}),
    an("content_block_delta", {"type": "content_block_delta", "index": 2,
                               "delta": {"type": "input_json_delta", "partial_json": "is\"}"}}),
    an("content_block_stop", {"type": "content_block_stop", "index": 2}),
    an("message_delta", {"type": "message_delta",
                         "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                         "usage": {"output_tokens": 89}}),
    an("message_stop", {"type": "message_stop"}),
]

ANTHROPIC_BODY = {
    "id": "msg_2", "type": "message", "role": "assistant", "model": "claude",
    "content": [{"type": "text", "text": "Sure."},
                {"type": "tool_use", "id": "toolu_02", "name": "Read",
                 "input": {"path": "b.txt"}}],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 40, "output_tokens": 12},
}


def agent_turns(n):
    """Answers for the agent loop test over HTTP: a TodoList call, then text."""
    if n == 1:
        return [oa({"role": "assistant", "content": "Planning."}),
                oa({"tool_calls": [{"index": 0, "id": "call_T", "type": "function",
                                    "function": {"name": "TodoList",
                                                 "arguments": "{\"todos\":[{\"title\":\"a\","}}]}),
                oa({"tool_calls": [{"index": 0, "function": {"arguments": "\"status\":\"pending\"}]}"}}]}),
                oa({}, finish="tool_calls"), oa(None, usage=USAGE, choices=False),
                "data: [DONE]\n\n"]
    return [oa({"role": "assistant", "content": "All set."}), oa({}, finish="stop"),
            "data: [DONE]\n\n"]


PAGE_HTML = (
    "<!DOCTYPE html><html><head><title>Test Page</title><style>p{color:red}</style>"
    "<script>var x=1;</script></head><body><nav><a href=\"/home\">Home</a></nav>"
    "<header>Site header</header><main><h1>Hello</h1><p>First   paragraph with "
    "<a href=\"docs/a.html\">a link</a> and <code>x = 1</code>.</p>"
    "<ul><li>one</li><li>two</li></ul><pre><code>int main(void)\n{\n    return 0;\n}</code></pre>"
    "<script>alert(1)</script></main><footer>Copyright</footer></body></html>")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def write_chunk(self, data):
        self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
        self.wfile.flush()

    def stream(self, events, split_bytes=False):
        self.start_stream()
        for ev in events:
            data = ev.encode()
            if split_bytes:
                # Cut every event into 5-byte pieces: lines, JSON and UTF-8
                # sequences end up split across TCP reads.
                for i in range(0, len(data), 5):
                    self.write_chunk(data[i:i + 5])
                    time.sleep(0.001)
            else:
                self.write_chunk(data)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send_raw(self, status, ctype, data, headers=None):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_web(self, name):
        """Pages for the FetchURL tests."""
        if name == "page.html":
            self.send_raw(200, "text/html; charset=utf-8", PAGE_HTML.encode())
        elif name == "latin1.html":
            self.send_raw(200, "text/html; charset=iso-8859-1",
                          b"<html><body><p>caf\xe9</p></body></html>")
        elif name == "latin1.txt":
            self.send_raw(200, "text/plain; charset=iso-8859-1", b"na\xefve caf\xe9")
        elif name == "readme.md":
            self.send_raw(200, "text/markdown", b"# Title\n\n*emphasis*\n")
        elif name == "gzip.txt":
            self.send_raw(200, "text/plain", gzip.compress(b"compressed text\n"),
                          {"Content-Encoding": "gzip"})
        elif name == "redirect":
            self.send_raw(302, "text/plain", b"", {"Location": "/web/readme.md"})
        elif name == "loop":
            self.send_raw(302, "text/plain", b"", {"Location": "/web/loop"})
        elif name == "toftp":
            self.send_raw(302, "text/plain", b"", {"Location": "ftp://127.0.0.1/file"})
        elif name == "missing":
            self.send_raw(404, "text/plain", b"no such page")
        elif name == "big":
            self.send_raw(200, "text/plain", b"0123456789abcde\n" * (10 * 65536))
        elif name == "image.png":
            self.send_raw(200, "image/png", b"\x89PNG\r\n\x1a\n")
        elif name == "slow":
            time.sleep(3)
            try:
                self.send_raw(200, "text/plain", b"late")
            except OSError:
                self.close_connection = True
        else:
            self.send_raw(404, "text/plain", b"unknown page")

    def swarm(self, scen, body):
        """AgentSwarm over HTTP: sub-agent requests (their system prompt says
        so) are answered slowly and counted to see how many run at once."""
        msgs = (body or {}).get("messages", [])
        system = " ".join(m.get("content") or "" for m in msgs if m.get("role") == "system")
        if "You are a sub-agent" in system:
            with LOCK:
                INFLIGHT[scen] = INFLIGHT.get(scen, 0) + 1
                MAX_INFLIGHT[scen] = max(MAX_INFLIGHT.get(scen, 0), INFLIGHT[scen])
            time.sleep(0.3)
            with LOCK:
                INFLIGHT[scen] -= 1
            last_user = [m for m in msgs if m.get("role") == "user"][-1]["content"]
            self.stream([oa({"role": "assistant", "content": "done: " + last_user}),
                         oa({}, finish="stop"), "data: [DONE]\n\n"])
        elif any(m.get("role") == "tool" for m in msgs):
            self.stream([oa({"role": "assistant", "content": "parent done"}),
                         oa({}, finish="stop"), "data: [DONE]\n\n"])
        else:
            args = json.dumps({"prompt_template": "check {{item}}", "items": ["a", "b", "c"]})
            self.stream([oa({"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": "sw1", "type": "function",
                 "function": {"name": "AgentSwarm", "arguments": args}}]}),
                oa({}, finish="tool_calls"), "data: [DONE]\n\n"])

    def ramp(self, scen, body):
        """AgentSwarm's concurrency without timing: "ramp-N-K" makes the
        parent call AgentSwarm with K items; each sub-agent request is held
        until N sub-agent requests have been open at once (the peak, kept as
        max_inflight), or 20 s have passed (it then answers "TIMEOUT", which
        fails the test instead of hanging it)."""
        msgs = (body or {}).get("messages", [])
        system = " ".join(m.get("content") or "" for m in msgs if m.get("role") == "system")
        want, k = (int(x) for x in scen.split("-")[1:3])
        if "You are a sub-agent" in system:
            with RAMP:
                INFLIGHT[scen] = INFLIGHT.get(scen, 0) + 1
                MAX_INFLIGHT[scen] = max(MAX_INFLIGHT.get(scen, 0), INFLIGHT[scen])
                RAMP.notify_all()
                reached = RAMP.wait_for(lambda: MAX_INFLIGHT[scen] >= want, timeout=20)
                INFLIGHT[scen] -= 1
            last_user = [m for m in msgs if m.get("role") == "user"][-1]["content"]
            text = ("done: " + last_user) if reached else "TIMEOUT"
            self.stream([oa({"role": "assistant", "content": text}),
                         oa({}, finish="stop"), "data: [DONE]\n\n"])
        elif any(m.get("role") == "tool" for m in msgs):
            self.stream([oa({"role": "assistant", "content": "parent done"}),
                         oa({}, finish="stop"), "data: [DONE]\n\n"])
        else:
            items = ["i%d" % i for i in range(k)]
            args = json.dumps({"prompt_template": "check {{item}}", "items": items})
            self.stream([oa({"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": "sw1", "type": "function",
                 "function": {"name": "AgentSwarm", "arguments": args}}]}),
                oa({}, finish="tool_calls"), "data: [DONE]\n\n"])

    def bgagent(self, scen, body):
        """Background sub-agents: a sub-agent (its system prompt says so)
        answers "answer N: <last user message>" (N = user messages so far, so
        a resumed one says 2); "todo" in the prompt makes it call TodoList
        first; "nest" makes it start a sub-agent of its own; "slow" keeps it streaming comments for up to 10 s (until the
        client goes away). The parent says whether it saw a notification."""
        msgs = (body or {}).get("messages", [])
        system = " ".join(m.get("content") or "" for m in msgs if m.get("role") == "system")
        users = [m.get("content") or "" for m in msgs if m.get("role") == "user"]
        if "You are a sub-agent" in system:
            last_user = users[-1]
            if "slow" in last_user:
                self.start_stream()
                for _ in range(200):
                    time.sleep(0.05)
                    try:
                        self.write_chunk(b": waiting\n\n")
                    except OSError:
                        return
                for ev in [oa({"role": "assistant", "content": "slow answer"}),
                           oa({}, finish="stop"), "data: [DONE]\n\n"]:
                    self.write_chunk(ev.encode())
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                return
            time.sleep(0.2)
            if "todo" in last_user and msgs[-1].get("role") == "user":
                args = json.dumps({"todos": [{"title": "look", "status": "in_progress"}]})
                self.stream([oa({"role": "assistant", "content": "Looking. ", "tool_calls": [
                    {"index": 0, "id": "t1", "type": "function",
                     "function": {"name": "TodoList", "arguments": args}}]}),
                    oa({}, finish="tool_calls"), "data: [DONE]\n\n"])
                return
            if "nest" in last_user and msgs[-1].get("role") == "user":
                args = json.dumps({"prompt": "inner", "description": "inner"})
                self.stream([oa({"role": "assistant", "content": None, "tool_calls": [
                    {"index": 0, "id": "n1", "type": "function",
                     "function": {"name": "Agent", "arguments": args}}]}),
                    oa({}, finish="tool_calls"), "data: [DONE]\n\n"])
                return
            text = "answer %d: %s" % (len(users), last_user)
            self.stream([oa({"role": "assistant", "content": text}),
                         oa({}, finish="stop"), "data: [DONE]\n\n"])
        else:
            seen = any("<system-notification>" in u for u in users)
            text = "parent saw the notification" if seen else "parent done"
            self.stream([oa({"role": "assistant", "content": text}),
                         oa({}, finish="stop"), "data: [DONE]\n\n"])

    def do_GET(self):
        if self.path.startswith("/web/"):
            self.do_web(self.path[5:])
            return
        scen = self.path.strip("/").split("/")[0]
        with LOCK:
            last = LAST.get(scen, {})
            last = dict(last, count=COUNTS.get(scen, 0), max_inflight=MAX_INFLIGHT.get(scen, 0))
        self.send_json(200, last)

    # Scenarios a server script built on this one adds: kind (the scenario's
    # name up to its first "-") -> name of a method taking the parsed body.
    # Their requests are neither counted nor kept for GET /<scenario>/last.
    EXTRA = {}

    def read_json_body(self):
        """The request's JSON body, or None when it does not parse."""
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def do_POST(self):
        parts = self.path.strip("/").split("/")
        scen = parts[0]
        extra = self.EXTRA.get(scen.split("-")[0])
        if extra:
            getattr(self, extra)(self.read_json_body())
            return
        body = self.read_json_body()
        with LOCK:
            COUNTS[scen] = COUNTS.get(scen, 0) + 1
            n = COUNTS[scen]
            LAST[scen] = {"headers": {k.lower(): v for k, v in self.headers.items()},
                          "header_names": [k.lower() for k in self.headers.keys()],
                          "body": body, "path": self.path}
        kind = scen.split("-")[0]
        if kind == "text":
            self.stream(OPENAI_TEXT)
        elif kind == "tools":
            self.stream(OPENAI_TOOLS, split_bytes=True)
        elif kind == "deepseek":
            self.stream(DEEPSEEK)
        elif kind == "moonshot":
            self.stream(MOONSHOT)
        elif kind == "llamacpp":
            self.stream(LLAMACPP)
        elif kind == "ollama":
            self.stream(OLLAMA)
        elif kind == "plain":
            self.send_json(200, OPENAI_BODY)
        elif kind == "rate":
            if n == 1:
                self.send_json(429, {"error": {"message": "Rate limit reached", "type": "requests"}},
                               {"Retry-After": "1"})
            else:
                self.stream(OPENAI_TEXT)
        elif kind == "ratedate":
            if n == 1:
                self.send_json(429, {"error": {"message": "slow down"}},
                               {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
            else:
                self.stream(OPENAI_TEXT)
        elif kind == "err500":
            if n == 1:
                self.send_json(500, {"error": {"message": "The server had an error"}})
            else:
                self.stream(OPENAI_TEXT)
        elif kind == "always500":
            self.send_json(503, {"error": {"message": "overloaded"}})
        elif kind == "bad400":
            self.send_json(400, {"error": {
                "message": "Invalid value for 'messages[0].role': 'robot' (key sk-test-SECRET-123)",
                "type": "invalid_request_error", "param": "messages", "code": None}})
        elif kind == "drop":
            self.start_stream()
            for ev in OPENAI_TEXT[1:3]:
                self.write_chunk(ev.encode())
            self.wfile.write(b"200\r\ndata: {\"cho")  # chunk cut short
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
        elif kind == "eof":
            self.stream(OPENAI_TEXT[1:4])  # no finish_reason, no [DONE]
        elif kind == "nofinish":
            # text-generation-inference: finish_reason stays null, then [DONE]
            self.stream(OPENAI_TEXT[1:6] + ["data: [DONE]\n\n"])
        elif kind == "crlf":
            self.stream(CRLF)
        elif kind == "barecr":
            self.stream(BARECR)
        elif kind == "barecrbytes":
            self.stream(BARECR, split_bytes=True)
        elif kind == "mixed":
            self.stream(MIXED, split_bytes=True)
        elif kind == "crsplit":
            self.start_stream()
            for ev in CRLF_SPLIT:
                data = ev.encode()
                while data:
                    cut = data.find(b"\r") + 1 or len(data)
                    self.write_chunk(data[:cut])
                    time.sleep(0.002)
                    data = data[cut:]
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        elif kind == "malformed":
            self.stream(MALFORMED)
        elif kind == "slow":
            self.start_stream()
            self.write_chunk(OPENAI_TEXT[1].encode())
            self.write_chunk(OPENAI_TEXT[2].encode())
            for _ in range(100):
                time.sleep(0.05)
                try:
                    self.write_chunk(b": waiting\n\n")
                except OSError:
                    return
        elif kind == "stall":
            self.start_stream()
            self.write_chunk(OPENAI_TEXT[1].encode())
            time.sleep(4)
        elif kind == "anthropic":
            self.stream(ANTHROPIC_STREAM, split_bytes=True)
        elif kind == "anthropicbody":
            self.send_json(200, ANTHROPIC_BODY)
        elif kind == "anthropic400":
            self.send_json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "max_tokens: Field required"}})
        elif kind == "agent":
            self.stream(agent_turns(n))
        elif kind == "swarm":
            self.swarm(scen, body)
        elif kind == "ramp":
            self.ramp(scen, body)
        elif kind == "bgagent":
            self.bgagent(scen, body)
        else:
            self.send_json(404, {"error": {"message": "unknown scenario " + scen}})


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # Clients that stop reading (size caps, cancels, timeouts) are expected.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


def serve(handler, server=Server):
    """Serves handler on 127.0.0.1 with an ephemeral port: prints the port,
    then stops when the test closes our stdin (or exits)."""
    srv = server(("127.0.0.1", 0), handler)
    print(srv.server_address[1], flush=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        sys.stdin.read()
    except (OSError, KeyboardInterrupt):
        pass
    srv.shutdown()


def main():
    serve(Handler)


if __name__ == "__main__":
    main()
