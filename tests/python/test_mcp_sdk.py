"""memoir's MCP server driven by the official Python MCP SDK (pip `mcp`), over stdio and
streamable HTTP, plus the JSON-RPC framing a generic client can trip on and the round-trip
time of a keep-alive HTTP client."""

import asyncio
import http.client
import json
import logging
import statistics
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import memoir_bin

EXPECTED_TOOLS = {
    "memoir_summarize", "memoir_get", "memoir_recall", "memoir_search", "memoir_log",
    "memoir_blame", "memoir_diff", "memoir_status", "memoir_branches", "memoir_remember",
    "memoir_forget", "memoir_checkout", "memoir_merge",
}


async def exercise(session: ClientSession) -> None:
    """The calls a host makes, with arguments filled the way form-based clients fill them."""
    await session.initialize()
    tools = await session.list_tools()
    assert {t.name for t in tools.tools} == EXPECTED_TOOLS
    for t in tools.tools:
        schema = json.dumps(t.input_schema)
        assert "$ref" not in schema and "null" not in schema, t.name

    r = await session.call_tool("memoir_summarize", {"depth": "1"})
    assert not r.is_error
    assert r.structured_content["prefix_counts"]["default"] == {"infra": 1, "preferences": 2}

    r = await session.call_tool("memoir_get", {"keys": "preferences.coding.testing"})
    assert not r.is_error
    assert r.structured_content["items"][0]["value"]["content"] == "prefers pytest over unittest"

    r = await session.call_tool(
        "memoir_remember",
        {"content": "likes green tea", "path": "preferences.drink", "confidence": "0.8"},
    )
    assert not r.is_error, r.content
    assert r.structured_content["full_key"] == "default:preferences.drink"

    r = await session.call_tool("memoir_search", {"query": "tea", "limit": "3"})
    assert not r.is_error
    assert [h["key"] for h in r.structured_content["hits"]] == ["preferences.drink"]

    r = await session.call_tool("memoir_log", {"limit": 2})
    assert len(r.structured_content["commits"]) == 2

    # A single missing key is a tool error carrying the CLI's code.
    r = await session.call_tool("memoir_get", {"keys": ["no.such"]})
    assert r.is_error
    assert r.structured_content["code"] == 2


def test_stdio_session(store):
    async def main():
        params = StdioServerParameters(command=memoir_bin(), args=["mcp", "--store", store])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session)

    asyncio.run(main())


def test_http_session_ends_cleanly(http_url, caplog):
    async def main():
        async with streamable_http_client(http_url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await exercise(session)

    with caplog.at_level(logging.DEBUG):
        asyncio.run(main())
    failures = [r.getMessage() for r in caplog.records if "termination failed" in r.getMessage()]
    assert failures == []


class KeepAlive:
    """A client that keeps one HTTP/1.1 connection open and reads every reply to its end,
    as the TypeScript SDK's fetch does. (The Python SDK closes each streamed reply once it
    holds the JSON-RPC message and so opens a new connection per call.)"""

    def __init__(self, url: str):
        u = urllib.parse.urlsplit(url)
        self.path = u.path
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        self.headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }

    def send(self, message: dict):
        self.conn.request("POST", self.path, json.dumps(message), self.headers)
        resp = self.conn.getresponse()
        body = resp.read().decode()
        assert resp.status in (200, 202), (resp.status, body)
        if "mcp-session-id" not in self.headers and resp.getheader("mcp-session-id"):
            self.headers["mcp-session-id"] = resp.getheader("mcp-session-id")
        replies = [json.loads(l[5:]) for l in body.splitlines() if l.startswith("data:") and l[5:].strip()]
        return replies[0] if replies else None


def test_http_keep_alive_round_trips_are_not_held_back(http_url):
    """memoir_get over one keep-alive connection answers in a few milliseconds. A reply whose
    last small write waits for the peer's delayed ACK (Nagle's algorithm left on) takes
    about 40 ms; the bound leaves room for a slow, busy machine."""
    c = KeepAlive(http_url)
    init = c.send({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "keep-alive", "version": "1"},
        },
    })
    assert init["result"]["serverInfo"], init
    assert c.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    sock = c.conn.sock
    call = {"name": "memoir_get", "arguments": {"keys": ["preferences.coding.testing"]}}
    ms = []
    for i in range(1, 66):
        start = time.perf_counter()
        reply = c.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
        if i > 5:
            ms.append((time.perf_counter() - start) * 1000)
        assert reply["id"] == i and not reply["result"]["isError"], reply
        assert reply["result"]["structuredContent"]["items"][0]["found"], reply
    assert c.conn.sock is sock, "the server closed the connection"
    c.conn.close()
    median = statistics.median(ms)
    assert median < 20, f"median round trip {median:.1f} ms over {len(ms)} calls: {sorted(ms)}"


def post(url: str, body: bytes):
    req = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_http_malformed_json_is_a_jsonrpc_parse_error(http_url):
    status, body = post(http_url, b"{not json")
    assert status == 400
    reply = json.loads(body)
    assert reply["error"]["code"] == -32700
    assert "id" in reply and reply["id"] is None

    status, body = post(http_url, b'{"jsonrpc":"2.0","id":5}')
    assert status == 400
    reply = json.loads(body)
    assert reply["error"]["code"] == -32600 and reply["id"] == 5


def stdio_exchange(store: str, version: str, *lines: str) -> list:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    text = "\n".join([json.dumps(init), '{"jsonrpc":"2.0","method":"notifications/initialized"}', *lines])
    out = subprocess.run(
        [memoir_bin(), "mcp", "--store", store],
        input=text + "\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    return [json.loads(l) for l in out.stdout.splitlines() if l.strip()]


def test_stdio_malformed_messages_get_errors_with_ids(store):
    replies = stdio_exchange(
        store, "2025-06-18", "{not json", '{"jsonrpc":"2.0","id":7}', '{"jsonrpc":"2.0","id":8,"method":"ping"}'
    )
    parse = [r for r in replies if r.get("error", {}).get("code") == -32700]
    assert len(parse) == 1 and "id" in parse[0] and parse[0]["id"] is None
    invalid = [r for r in replies if r.get("error", {}).get("code") == -32600]
    assert [r["id"] for r in invalid] == [7]
    assert any(r.get("id") == 8 and r.get("result") == {} for r in replies)


def test_stdio_batches_follow_the_protocol_version(store):
    batch = json.dumps([
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4},
    ])
    # 2025-03-26 has batches: one array answers all three.
    replies = stdio_exchange(store, "2025-03-26", batch)
    arrays = [r for r in replies if isinstance(r, list)]
    assert len(arrays) == 1
    by_id = {r["id"]: r for r in arrays[0]}
    assert set(by_id) == {2, 3, 4}
    assert by_id[2]["result"] == {} and len(by_id[3]["result"]["tools"]) == len(EXPECTED_TOOLS)
    assert by_id[4]["error"]["code"] == -32600

    # Later versions have none: refused with an error, not dropped.
    replies = stdio_exchange(store, "2025-06-18", batch)
    refused = [r for r in replies if isinstance(r, dict) and r.get("error")]
    assert len(refused) == 1 and refused[0]["id"] is None
    assert "batch" in refused[0]["error"]["message"]
