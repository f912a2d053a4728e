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
    "memoir_forget", "memoir_checkout", "memoir_merge", "memoir_capture", "memoir_taxonomy",
    "memoir_sync_branch", "memoir_memory", "search", "fetch",
}

#: (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) of every tool.
ANNOTATIONS = {
    "memoir_summarize": (True, False, True, False),
    "memoir_get": (True, False, True, False),
    "memoir_recall": (True, False, True, False),
    "memoir_search": (True, False, True, False),
    "memoir_log": (True, False, True, False),
    "memoir_blame": (True, False, True, False),
    "memoir_diff": (True, False, True, False),
    "memoir_status": (True, False, True, False),
    "memoir_branches": (True, False, True, False),
    "memoir_remember": (False, False, False, False),
    "memoir_forget": (False, True, False, False),
    "memoir_checkout": (False, False, True, False),
    "memoir_merge": (False, False, False, False),
    "memoir_capture": (False, False, False, True),
    "memoir_taxonomy": (True, False, True, False),
    "memoir_sync_branch": (False, True, True, False),
    "memoir_memory": (False, True, False, False),
    "search": (True, False, True, False),
    "fetch": (True, False, True, False),
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


async def every_tool_and_resource(session: ClientSession) -> None:
    """Lists and calls every tool (capture with a scripted model), checks each tool's
    annotations, and lists and reads the memories as resources."""
    await session.initialize()
    tools = (await session.list_tools()).tools
    assert {t.name for t in tools} == set(ANNOTATIONS)
    for t in tools:
        a = t.annotations
        got = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        assert got == ANNOTATIONS[t.name], t.name

    calls = [
        ("memoir_summarize", {"depth": 1}),
        ("memoir_get", {"keys": ["infra.database"]}),
        ("memoir_recall", {"query": "database"}),
        ("memoir_search", {"query": "pytest"}),
        ("memoir_log", {"limit": 5}),
        ("memoir_blame", {"key": "infra.database"}),
        ("memoir_diff", {}),
        ("memoir_status", {}),
        ("memoir_branches", {}),
        ("memoir_checkout", {"target": "side", "create": True}),
        ("memoir_remember", {"content": "ruff lints the code", "path": "tools.lint"}),
        ("memoir_checkout", {"target": "main"}),
        ("memoir_sync_branch", {"source": "side"}),
        ("memoir_merge", {"source": "side"}),
        ("memoir_forget", {"key": "preferences.coding.style"}),
        ("memoir_capture", {"turn": "[Human] Jobs go through RabbitMQ now.\n[Assistant] Noted."}),
        ("memoir_taxonomy", {"action": "show", "id": "preferences"}),
        ("memoir_memory", {"command": "create", "path": "/memories/a.md", "file_text": "hello"}),
        ("search", {"query": "postgres"}),
        ("fetch", {"id": "default:infra.database"}),
    ]
    assert {name for name, _ in calls} == set(ANNOTATIONS)
    answers = {}
    for name, args in calls:
        r = await session.call_tool(name, args)
        assert not r.is_error, (name, r.content)
        answers[name] = r.structured_content
    assert answers["memoir_sync_branch"]["added_keys"] == ["tools.lint"]
    assert answers["memoir_capture"]["captured"][0]["key"] == "project.infra.queue"
    assert answers["search"]["results"][0] == {
        "id": "default:infra.database",
        "title": "infra.database",
        "url": "memoir://default/infra.database",
    }
    assert answers["fetch"]["text"] == "the staging database is postgres 16"
    r = await session.call_tool("memoir_memory", {"command": "view", "path": "/memories/../x"})
    assert r.is_error and r.content[0].text == "Path /memories/../x would escape /memories directory"

    listed = await session.list_resources()
    uris = [str(r.uri) for r in listed.resources]
    assert "memoir://default/infra.database" in uris and listed.next_cursor is None
    read = await session.read_resource("memoir://default/infra.database")
    assert read.contents[0].text == "the staging database is postgres 16"
    # The store's first memory, at the commit that wrote it.
    log = (await session.call_tool("memoir_log", {"limit": 100})).structured_content["commits"]
    first = log[-2]["hash"]
    old = await session.read_resource(f"memoir://default/preferences.coding.testing?at={first}")
    assert old.contents[0].text == "prefers pytest over unittest"
    templates = await session.list_resource_templates()
    assert templates.resource_templates[0].uri_template == "memoir://{namespace}/{path}"


def model_script(tmp_path) -> str:
    script = tmp_path / "model.sh"
    script.write_text(
        "cat >/dev/null\nprintf 'project.infra.queue\\tJobs go through RabbitMQ.\\n'\n"
    )
    return f"sh {script}"


def test_every_tool_and_resource_over_stdio(store, tmp_path):
    async def main():
        params = StdioServerParameters(
            command=memoir_bin(),
            args=["mcp", "--store", store],
            env={"MEMOIR_LLM_COMMAND": model_script(tmp_path), "MEMOIR_AUTHOR": "tester"},
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await every_tool_and_resource(session)

    asyncio.run(main())


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
