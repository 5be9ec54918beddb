// An editor's side of ACP, written with the official TypeScript SDK (@agentclientprotocol/sdk):
// drives `cairn acp` (the binary at $CAIRN_BIN, in the environment it is given) through
// initialize (offering terminals) -> session/new -> a prompt with an image and an embedded file
// (the scripted model reads, edits with a permission question answered "allow once", runs
// `echo` in one of this client's terminals) -> a second prompt cancelled while its command runs
// -> a fresh connection that lists the project's sessions, loads the session, closes it,
// resumes it, and tries to authenticate -> a third connection, without credentials, whose
// session/new is refused as auth_required.
// Prints one JSON report on stdout for tests/acp.rs to check; logs go to stderr.
//
// Usage: CAIRN_BIN=... ACP_PROJECT=/abs/project node client.mjs
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const bin = process.env.CAIRN_BIN;
const project = process.env.ACP_PROJECT;
if (!bin || !project) {
  console.error("CAIRN_BIN and ACP_PROJECT must be set");
  process.exit(2);
}
// A 1x1 PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** The editor's terminals: real processes (each its own process group), their output kept. */
function terminals(log) {
  const running = new Map();
  let next = 0;
  const find = (params) => {
    const t = running.get(params.terminalId);
    if (!t) throw new Error(`no terminal ${params.terminalId}`);
    return t;
  };
  const status = (t) => (t.exit ? { exitCode: t.exit.exitCode, signal: t.exit.signal } : null);
  return {
    async create({ params }) {
      const terminalId = `term-${++next}`;
      log.terminals.push({ method: "create", terminalId, params });
      const env = { ...process.env };
      for (const v of params.env ?? []) env[v.name] = v.value;
      const child = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const t = { child, output: "", exit: null };
      const append = (chunk) => (t.output += chunk.toString());
      child.stdout.on("data", append);
      child.stderr.on("data", append);
      t.exited = new Promise((resolve) =>
        child.on("close", (code, signal) => {
          t.exit = { exitCode: code, signal };
          resolve();
        }),
      );
      running.set(terminalId, t);
      return { terminalId };
    },
    async output({ params }) {
      log.terminals.push({ method: "output", terminalId: params.terminalId });
      const t = find(params);
      return { output: t.output, truncated: false, exitStatus: status(t) };
    },
    async waitForExit({ params }) {
      log.terminals.push({ method: "wait_for_exit", terminalId: params.terminalId });
      const t = find(params);
      await t.exited;
      return status(t);
    },
    async kill({ params }) {
      log.terminals.push({ method: "kill", terminalId: params.terminalId });
      const t = find(params);
      if (!t.exit) process.kill(-t.child.pid, "SIGKILL");
      return {};
    },
    async release({ params }) {
      log.terminals.push({ method: "release", terminalId: params.terminalId });
      const t = find(params);
      if (!t.exit) process.kill(-t.child.pid, "SIGKILL");
      running.delete(params.terminalId);
      return {};
    },
  };
}

/** Run `op(ctx, log)` against a fresh `cairn acp`; `log` collects what the agent sent. */
async function withAgent(onPermission, op, env = process.env) {
  const child = spawn(bin, ["acp"], { stdio: ["pipe", "pipe", "inherit"], env });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const log = { updates: [], permissions: [], terminals: [] };
  const term = terminals(log);
  const app = client({ name: "cairn-acp-test" })
    .onRequest(methods.client.terminal.create, term.create)
    .onRequest(methods.client.terminal.output, term.output)
    .onRequest(methods.client.terminal.waitForExit, term.waitForExit)
    .onRequest(methods.client.terminal.kill, term.kill)
    .onRequest(methods.client.terminal.release, term.release)
    .onNotification(methods.client.session.update, ({ params }) => {
      log.updates.push(params);
      log.onUpdate?.(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      log.permissions.push(params);
      return onPermission(params, log);
    });
  const result = await app.connectWith(stream, (ctx) => op(ctx, log));
  child.stdin.end();
  const code = await Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => resolve("still running"), 10000)),
  ]);
  if (code === "still running") child.kill("SIGKILL");
  return { ...result, exitCode: code };
}

const timeout = (ms, what) =>
  new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms));

/** Wait until no update has come for 200 ms: the SDK hands notifications to their handler
 * asynchronously, so some sent before an answer may be seen after it. */
async function settle(log) {
  let seen = -1;
  while (seen !== log.updates.length) {
    seen = log.updates.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const report = {};
const t0 = Date.now();
const step = (what) => console.error(`[acp client] ${Date.now() - t0} ms: ${what}`);

// The first connection: a new session, a prompt, a cancelled prompt.
const first = await withAgent(
  async (params, log) => {
    if (log.cancelling) {
      // A question during the cancelled turn: the client answers it as cancelled.
      return { outcome: { outcome: "cancelled" } };
    }
    const once = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: once.optionId } };
  },
  async (ctx, log) => {
    const init = await ctx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
      clientInfo: { name: "cairn-acp-test", version: "1" },
    });
    step("initialized");
    const session = await ctx.request(methods.agent.session.new, { cwd: project, mcpServers: [] });
    step("session opened");
    const id = session.sessionId;

    const edit = await Promise.race([
      ctx.request(methods.agent.session.prompt, {
        sessionId: id,
        prompt: [
          { type: "text", text: "Please change alpha to gamma in notes.txt, then say hello." },
          {
            type: "resource",
            resource: { uri: `file://${project}/spec.md`, text: "SPEC-MARKER: greet people", mimeType: "text/markdown" },
          },
          { type: "image", data: PNG, mimeType: "image/png" },
        ],
      }),
      timeout(30000, "the first prompt"),
    ]);
    step("first prompt answered");
    await settle(log);
    const firstUpdates = log.updates.splice(0);
    const firstPermissions = log.permissions.splice(0);
    const firstTerminals = log.terminals.splice(0);

    // The second prompt: cancelled as soon as its command runs in a terminal.
    log.onUpdate = (u) => {
      const shown = u.update.sessionUpdate === "tool_call_update" && u.update.content?.[0]?.type === "terminal";
      if (shown && !log.cancelling) {
        log.cancelling = true;
        ctx.notify(methods.agent.session.cancel, { sessionId: id });
      }
    };
    const started = Date.now();
    const cancelled = await Promise.race([
      ctx.request(methods.agent.session.prompt, {
        sessionId: id,
        prompt: [{ type: "text", text: "Now wait a long time." }],
      }),
      timeout(30000, "the cancelled prompt"),
    ]);
    step("second prompt answered");
    // The interrupted command's terminal is killed and released on the way out.
    const released = Date.now();
    while (!log.terminals.some((t) => t.method === "release") && Date.now() - released < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return {
      firstTerminals,
      secondTerminals: log.terminals.splice(0),
      init,
      session,
      edit,
      firstUpdates,
      firstPermissions,
      cancelled,
      cancelledMs: Date.now() - started,
      secondUpdates: log.updates.splice(0),
    };
  },
);
step("first connection closed");
Object.assign(report, { first });

// A fresh connection loads the session: its history is replayed before the answer.
const second = await withAgent(
  async () => ({ outcome: { outcome: "cancelled" } }),
  async (ctx, log) => {
    const init = await ctx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const sessionId = first.session.sessionId;
    const listed = await ctx.request(methods.agent.session.list, { cwd: project });
    const loaded = await Promise.race([
      ctx.request(methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] }),
      timeout(30000, "session/load"),
    ]);
    await settle(log);
    const replayed = log.updates.splice(0);
    const listedOpen = await ctx.request(methods.agent.session.list, {});
    const closed = await ctx.request(methods.agent.session.close, { sessionId });
    // A closed session is no longer prompted...
    const afterClose = await ctx
      .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] })
      .then(() => "answered", (e) => e.message ?? String(e));
    // ...but can be resumed: its conversation back, without a replay.
    const resumed = await Promise.race([
      ctx.request(methods.agent.session.resume, { sessionId, cwd: project, mcpServers: [] }),
      timeout(30000, "session/resume"),
    ]);
    await settle(log);
    const afterResume = log.updates.splice(0);
    const authenticate = await ctx
      .request(methods.agent.authenticate, { methodId: "api-key" })
      .then(() => "accepted", (e) => JSON.stringify(e.data ?? e.message ?? String(e)));
    return { init, listed, loaded, replayed, listedOpen, closed, afterClose, resumed, afterResume, authenticate };
  },
);
step("second connection closed");
Object.assign(report, { second });

// A third connection with no credentials at all: session/new is refused as auth_required.
const bare = { ...process.env };
for (const v of [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
]) {
  delete bare[v];
}
const third = await withAgent(
  async () => ({ outcome: { outcome: "cancelled" } }),
  async (ctx) => {
    await ctx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const refused = await ctx
      .request(methods.agent.session.new, { cwd: project, mcpServers: [] })
      .then(
        () => ({ outcome: "opened" }),
        (e) => ({ code: e.code, data: e.data ?? null, message: e.message ?? String(e) }),
      );
    return { refused };
  },
  bare,
);
step("third connection closed");
Object.assign(report, { third });
// The timers of the races above would keep node alive: leave once the report is out.
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(0));
