// Benchmarks `cairn acp` (issue 23) against `cairn -p`, with the official ACP TypeScript SDK as
// the editor and a tiny model server in this process that answers every request with a canned
// one-turn Anthropic stream and notes when each request arrived.
//
// Measures, over RUNS runs each (median, milliseconds):
//   - `cairn -p hi`: process spawn -> the model request arriving;
//   - `cairn acp`: process spawn -> the model request arriving (initialize, session/new and the
//     prompt sent as soon as possible), and initialize sent -> the first session/update of the
//     prompt's turn (the first agent_message_chunk);
// and the RSS of `cairn acp` with one session that has answered a prompt, then with a second
// concurrent session that has answered one too (VmRSS from /proc; the median over runs).
//
// Usage: CAIRN_BIN=target/release/cairn RUNS=20 node scripts/bench-acp.mjs  (run from a folder
// where @agentclientprotocol/sdk is installed; scripts/bench-acp.sh does that).
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const bin = process.env.CAIRN_BIN;
const runs = Number(process.env.RUNS || 20);
if (!bin) {
  console.error("CAIRN_BIN must be set");
  process.exit(2);
}

const sse = [
  ["message_start", { type: "message_start", message: { id: "m", type: "message", role: "assistant",
    model: "bench", content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello." } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }],
  ["message_stop", { type: "message_stop" }],
].map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join("");

let arrivals = [];
const server = createServer((req, res) => {
  arrivals.push(performance.now());
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(sse);
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const port = server.address().port;

const work = mkdtempSync(join(tmpdir(), "cairn-bench-acp-"));
const home = join(work, "home");
const project = join(work, "project");
mkdirSync(home);
mkdirSync(project);
const env = {
  PATH: process.env.PATH,
  HOME: home,
  CAIRN_DATA_DIR: join(work, "data"),
  CAIRN_CHECKPOINTS: "off",
  ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
  ANTHROPIC_API_KEY: "bench",
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
const rssKiB = (pid) => {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/);
  return m ? Number(m[1]) : NaN;
};

async function headless() {
  arrivals = [];
  const t0 = performance.now();
  const child = spawn(bin, ["-p", "hi"], { cwd: project, env, stdio: ["ignore", "ignore", "inherit"] });
  await new Promise((r) => child.on("exit", r));
  return arrivals[0] - t0;
}

async function acp(measureMemory) {
  arrivals = [];
  const t0 = performance.now();
  const child = spawn(bin, ["acp", "--trust-folder"], { cwd: project, env, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((r) => child.on("exit", r));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let promptSent = false;
  let firstUpdate = null;
  const app = client({ name: "cairn-bench" })
    .onNotification(methods.client.session.update, ({ params }) => {
      if (promptSent && firstUpdate === null && params.update.sessionUpdate === "agent_message_chunk") {
        firstUpdate = performance.now();
      }
    })
    .onRequest(methods.client.session.requestPermission, async () => ({ outcome: { outcome: "cancelled" } }));
  const result = await app.connectWith(stream, async (ctx) => {
    const tInit = performance.now();
    await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const a = await ctx.request(methods.agent.session.new, { cwd: project, mcpServers: [] });
    promptSent = true;
    await ctx.request(methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: "text", text: "hi" }] });
    const out = { toRequest: arrivals[0] - t0, toUpdate: firstUpdate - tInit };
    if (measureMemory) {
      out.rssOne = rssKiB(child.pid);
      const b = await ctx.request(methods.agent.session.new, { cwd: project, mcpServers: [] });
      await ctx.request(methods.agent.session.prompt, { sessionId: b.sessionId, prompt: [{ type: "text", text: "hi" }] });
      out.rssTwo = rssKiB(child.pid);
    }
    return out;
  });
  child.stdin.end();
  await exited;
  return result;
}

// Warm the page cache and the binary.
await headless();
await acp(false);
const p = [], toRequest = [], toUpdate = [], one = [], two = [];
for (let i = 0; i < runs; i++) {
  p.push(await headless());
  const r = await acp(true);
  toRequest.push(r.toRequest);
  toUpdate.push(r.toUpdate);
  one.push(r.rssOne);
  two.push(r.rssTwo);
}
const ms = (x) => `${x.toFixed(2)} ms`;
console.log(`runs: ${runs}`);
console.log(`cairn -p: spawn -> model request        median ${ms(median(p))}`);
console.log(`cairn acp: spawn -> model request       median ${ms(median(toRequest))} (${(median(toRequest) - median(p)).toFixed(2)} ms over -p)`);
console.log(`cairn acp: initialize -> first update   median ${ms(median(toUpdate))}`);
console.log(`cairn acp RSS, one session              median ${median(one)} KiB`);
console.log(`cairn acp RSS, two sessions             median ${median(two)} KiB (+${median(two.map((t, i) => t - one[i]))} KiB)`);
server.close();
