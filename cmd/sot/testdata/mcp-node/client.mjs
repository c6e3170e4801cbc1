// An independent MCP client for sot mcp, written with the official
// TypeScript SDK. cmd/sot's TestMCPNodeClient runs it as
//
//	SOT_MCP_COMMAND=<sot> SOT_MCP_CWD=<repo> node client.mjs
//
// It starts `<sot> mcp` over stdio in SOT_MCP_CWD with this process's
// environment, checks the tools, starts a review, waits for its result,
// reads its synthesis as a resource, and prints one JSON line:
//
//	{"tools":[...],"run_id":"...","verdict":"ok","synthesis_bytes":N,"progress":N}
//
// Any failure ends it with exit code 1 and a message on stderr.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const REQUIRED_TOOLS = ["review", "ask", "debate", "run_status", "run_result", "run_cancel", "estimate"];
const WAIT_MS = 120_000;

class Failure extends Error {}

function fail(msg) {
  throw new Failure(msg);
}

function env(name) {
  const v = process.env[name];
  if (!v) fail(`${name} is not set: it must name the sot executable (SOT_MCP_COMMAND) and the project directory (SOT_MCP_CWD)`);
  return v;
}

// toolText is the text content of a tool result, for error messages.
function toolText(res) {
  return (res.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

async function callTool(client, name, args, options) {
  const res = await client.callTool({ name, arguments: args }, undefined, options);
  if (res.isError) fail(`tool ${name} failed: ${toolText(res)}`);
  if (!res.structuredContent || typeof res.structuredContent !== "object") {
    fail(`tool ${name} returned no structured content: ${JSON.stringify(res)}`);
  }
  return res.structuredContent;
}

async function main() {
  const transport = new StdioClientTransport({
    command: env("SOT_MCP_COMMAND"),
    args: ["mcp"],
    cwd: env("SOT_MCP_CWD"),
    // The test's variables (SOT_TEST_RUN_MAIN, the fake model server, HOME,
    // XDG_*) must reach the server and, through it, its runs.
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = new Client({ name: "sot-mcp-node-client", version: "0.0.0" });
  await client.connect(transport);
  try {
    const server = client.getServerVersion();
    if (!server?.name) fail(`the server did not name itself: ${JSON.stringify(server)}`);

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    const missing = REQUIRED_TOOLS.filter((n) => !names.includes(n));
    if (missing.length > 0) fail(`tools missing: ${missing.join(", ")} (the server lists ${names.join(", ")})`);
    for (const t of tools) {
      if (t.inputSchema?.type !== "object") fail(`tool ${t.name} has no object input schema: ${JSON.stringify(t.inputSchema)}`);
    }

    const started = await callTool(client, "review", { specialists: "security", perspectives: "none" });
    const runId = started.run_id;
    if (typeof runId !== "string" || runId === "") fail(`review returned no run_id: ${JSON.stringify(started)}`);
    if (!["running", "done"].includes(started.state)) fail(`review returned state ${JSON.stringify(started.state)}: ${JSON.stringify(started)}`);

    let progress = 0;
    const outcome = await callTool(
      client,
      "run_result",
      { run_id: runId, wait: true },
      {
        timeout: WAIT_MS,
        maxTotalTimeout: WAIT_MS,
        onprogress: () => {
          progress++;
        },
      },
    );
    if (outcome.run_id !== runId) fail(`run_result is about ${JSON.stringify(outcome.run_id)}, not ${runId}`);
    if (outcome.verdict !== "ok") fail(`run ${runId} ended with verdict ${JSON.stringify(outcome.verdict)}: ${JSON.stringify(outcome)}`);

    const uri = `sot://runs/${runId}/REVIEW-SYNTHESIS.md`;
    if (!(outcome.outputs ?? []).includes(uri)) fail(`the outputs do not list ${uri}: ${JSON.stringify(outcome.outputs)}`);
    const res = await client.readResource({ uri });
    const item = (res.contents ?? []).find((c) => c.uri === uri) ?? res.contents?.[0];
    if (!item || typeof item.text !== "string") fail(`${uri} has no text content: ${JSON.stringify(res)}`);
    if (!/^#{1,6} \S/.test(item.text)) fail(`${uri} does not start with a Markdown heading: ${JSON.stringify(item.text.slice(0, 200))}`);

    process.stdout.write(
      JSON.stringify({
        tools: names,
        run_id: runId,
        verdict: outcome.verdict,
        synthesis_bytes: Buffer.byteLength(item.text, "utf8"),
        progress,
      }) + "\n",
    );
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    const msg = err instanceof Failure ? err.message : err?.stack ?? String(err);
    process.stderr.write(`mcp-node client: ${msg}\n`);
    process.exit(1);
  },
);
