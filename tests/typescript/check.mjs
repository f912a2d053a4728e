// memoir's MCP server driven by the official TypeScript SDK (@modelcontextprotocol/sdk) and by
// the MCP Inspector's CLI mode, over stdio, on a fresh store: every tool listed with its four
// annotations and called, memories listed and read as resources (also at a revision), and
// the Inspector listing the tools and calling one. Run by tests/it/typescript_sdk.rs:
//   node check.mjs path/to/memoir
// (after `npm ci` here). Prints "ok N checks" and exits 0, or throws.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const bin = resolve(process.argv[2]);
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "memoir-ts-sdk-"));
const store = join(dir, "store");
const env = { ...process.env, MEMOIR_AUTHOR: "tester", MEMOIR_NOW: "1767323045" };
let checks = 0;
const check = (f) => {
  f();
  checks += 1;
};

// [readOnlyHint, destructiveHint, idempotentHint, openWorldHint]
const READ = [true, false, true, false];
const ANNOTATIONS = {
  memoir_summarize: READ,
  memoir_get: READ,
  memoir_recall: READ,
  memoir_search: READ,
  memoir_log: READ,
  memoir_blame: READ,
  memoir_diff: READ,
  memoir_status: READ,
  memoir_branches: READ,
  memoir_remember: [false, false, false, false],
  memoir_forget: [false, true, false, false],
  memoir_checkout: [false, false, true, false],
  memoir_merge: [false, false, false, false],
  memoir_capture: [false, false, false, true],
  memoir_taxonomy: READ,
  memoir_sync_branch: [false, true, true, false],
  memoir_memory: [false, true, false, false],
  search: READ,
  fetch: READ,
};

function memoir(...args) {
  return execFileSync(bin, ["-s", store, ...args], { env, encoding: "utf8" });
}

try {
  execFileSync(bin, ["new", store], { env });
  memoir("remember", "the staging database is postgres 16", "-p", "infra.database");
  memoir("remember", "prefers pytest over unittest", "-p", "preferences.testing");
  memoir("remember", "prefers pytest, always", "-p", "preferences.testing", "--replace");
  const model = join(dir, "model.sh");
  writeFileSync(model, "cat >/dev/null\nprintf 'project.infra.queue\\tJobs go through RabbitMQ.\\n'\n");

  const client = new Client({ name: "memoir-ts-check", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: bin,
      args: ["-q", "mcp", "--store", store],
      env: { ...env, MEMOIR_LLM_COMMAND: `sh ${model}` },
      stderr: "ignore",
    }),
  );

  const { tools } = await client.listTools();
  check(() => assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(ANNOTATIONS).sort()));
  for (const t of tools) {
    const a = t.annotations;
    check(() =>
      assert.deepEqual(
        [a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint],
        ANNOTATIONS[t.name],
        t.name,
      ),
    );
  }

  const calls = [
    ["memoir_summarize", { depth: 1 }],
    ["memoir_get", { keys: ["infra.database"] }],
    ["memoir_recall", { query: "database", mode: "lexical" }],
    ["memoir_search", { query: "pytest" }],
    ["memoir_log", { limit: 5 }],
    ["memoir_blame", { key: "preferences.testing" }],
    ["memoir_diff", {}],
    ["memoir_status", {}],
    ["memoir_branches", {}],
    ["memoir_checkout", { target: "side", create: true }],
    ["memoir_remember", { content: "ruff lints the code", path: "tools.lint" }],
    ["memoir_checkout", { target: "main" }],
    ["memoir_sync_branch", { source: "side" }],
    ["memoir_merge", { source: "side" }],
    ["memoir_forget", { key: "preferences.testing" }],
    ["memoir_capture", { turn: "[Human] Jobs go through RabbitMQ now.\n[Assistant] Noted." }],
    ["memoir_taxonomy", { action: "list" }],
    ["memoir_memory", { command: "create", path: "/memories/notes.md", file_text: "hello" }],
    ["search", { query: "postgres" }],
    ["fetch", { id: "default:infra.database" }],
  ];
  check(() => assert.deepEqual([...new Set(calls.map((c) => c[0]))].sort(), Object.keys(ANNOTATIONS).sort()));
  const got = {};
  for (const [name, args] of calls) {
    const r = await client.callTool({ name, arguments: args });
    check(() => assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.content)}`));
    got[name] = r.structuredContent;
  }
  check(() => assert.deepEqual(got.memoir_sync_branch.added_keys, ["tools.lint"]));
  check(() => assert.equal(got.memoir_capture.captured[0].key, "project.infra.queue"));
  check(() => assert.equal(got.memoir_memory.text, "File created successfully at: /memories/notes.md"));
  const search = await client.callTool({ name: "search", arguments: { query: "postgres" } });
  check(() =>
    assert.deepEqual(JSON.parse(search.content[0].text), {
      results: [{ id: "default:infra.database", title: "infra.database", url: "memoir://default/infra.database" }],
    }),
  );
  check(() => assert.equal(got.fetch.text, "the staging database is postgres 16"));
  const refused = await client.callTool({ name: "memoir_memory", arguments: { command: "view", path: "/tmp" } });
  check(() => assert.equal(refused.isError, true));
  check(() => assert.equal(refused.content[0].text, "Path must start with /memories, got: /tmp"));

  const { resources, nextCursor } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  check(() => assert.ok(uris.includes("memoir://default/infra.database"), uris.join(" ")));
  check(() => assert.equal(nextCursor, undefined));
  const now = await client.readResource({ uri: "memoir://default/infra.database" });
  check(() => assert.equal(now.contents[0].text, "the staging database is postgres 16"));
  // preferences.testing is forgotten now; its first text is in the third commit.
  const log = got.memoir_log.commits;
  const first = log[log.length - 3].hash;
  const old = await client.readResource({ uri: `memoir://default/preferences.testing?at=${first}` });
  check(() => assert.equal(old.contents[0].text, "prefers pytest over unittest"));
  await assert.rejects(client.readResource({ uri: "memoir://default/preferences.testing" }));
  checks += 1;
  const { resourceTemplates } = await client.listResourceTemplates();
  check(() => assert.equal(resourceTemplates[0].uriTemplate, "memoir://{namespace}/{path}"));
  await client.close();

  // The Inspector's CLI mode: lists the tools and calls one.
  const inspector = join(here, "node_modules", ".bin", "mcp-inspector");
  const inspect = (...args) =>
    JSON.parse(
      execFileSync(inspector, ["--cli", bin, "-q", "mcp", "--store", store, ...args], {
        env,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    );
  const listed = inspect("--method", "tools/list");
  check(() => assert.deepEqual(listed.tools.map((t) => t.name).sort(), Object.keys(ANNOTATIONS).sort()));
  const called = inspect("--method", "tools/call", "--tool-name", "fetch", "--tool-arg", "id=default:infra.database");
  check(() => assert.equal(JSON.parse(called.content[0].text).id, "default:infra.database"));
  const read = inspect("--method", "resources/read", "--uri", "memoir://default/infra.database");
  check(() => assert.equal(read.contents[0].text, "the staging database is postgres 16"));
  console.log(`ok ${checks} checks`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
