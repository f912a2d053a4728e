// Median round trip of one memoir_get through the official TypeScript MCP SDK, over stdio
// and over streamable HTTP (keep-alive connections), against a fresh store. From this
// directory, after `cargo build --release` at the project root:
//   npm ci                                        (the SDK, pinned by package-lock.json)
//   node bench.mjs [path/to/memoir] [calls]      (default: ../../target/release/memoir, 200)
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const bin = resolve(process.argv[2] ?? "../../target/release/memoir");
const calls = Number(process.argv[3] ?? 200);
const dir = mkdtempSync(join(tmpdir(), "memoir-mcp-bench-"));
const store = join(dir, "store");
execFileSync(bin, ["new", store]);
for (let i = 0; i < 50; i++) {
  execFileSync(bin, ["-s", store, "remember", `note number ${i}`, "-p", `notes.n${i}`]);
}

async function median(transport) {
  const client = new Client({ name: "memoir-bench", version: "1" });
  await client.connect(transport);
  const args = { name: "memoir_get", arguments: { keys: ["notes.n7"] } };
  for (let i = 0; i < 10; i++) await client.callTool(args);
  const ms = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await client.callTool(args);
    ms.push(performance.now() - t);
  }
  await client.close();
  ms.sort((a, b) => a - b);
  return ms[Math.floor(ms.length / 2)];
}

function listen() {
  const server = spawn(bin, ["mcp", "--store", store, "--http", "127.0.0.1:0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((ok, fail) => {
    let seen = "";
    server.stderr.on("data", (chunk) => {
      seen += chunk;
      const m = seen.match(/listening on (http:\/\/\S+)/);
      if (m) ok({ server, url: new URL(m[1]) });
    });
    server.on("exit", () => fail(new Error(`memoir mcp --http exited: ${seen}`)));
  });
}

try {
  const stdio = await median(
    new StdioClientTransport({ command: bin, args: ["mcp", "--store", store], stderr: "ignore" }),
  );
  const { server, url } = await listen();
  const http = await median(new StreamableHTTPClientTransport(url));
  server.removeAllListeners("exit");
  server.kill();
  console.log(`memoir_get, ${calls} calls, median round trip`);
  console.log(`  stdio: ${stdio.toFixed(2)} ms`);
  console.log(`  http:  ${http.toFixed(2)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
