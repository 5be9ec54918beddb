// An editor's side of ACP, written with the official TypeScript SDK (@agentclientprotocol/sdk):
// drives `cairn acp` (the binary at $CAIRN_BIN, in the environment it is given) through
// initialize -> session/new -> a prompt with an image and an embedded file (the scripted model
// reads, edits with a permission question answered "allow once", runs `echo`) -> a second
// prompt cancelled while its command runs -> a fresh connection that loads the session.
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

/** Run `op(ctx, log)` against a fresh `cairn acp`; `log` collects what the agent sent. */
async function withAgent(onPermission, op) {
  const child = spawn(bin, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const log = { updates: [], permissions: [] };
  const app = client({ name: "cairn-acp-test" })
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
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
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
    const firstUpdates = log.updates.splice(0);
    const firstPermissions = log.permissions.splice(0);

    // The second prompt: cancelled as soon as its command shows up.
    log.onUpdate = (u) => {
      if (u.update.sessionUpdate === "tool_call" && !log.cancelling) {
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
    return {
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
    const loaded = await Promise.race([
      ctx.request(methods.agent.session.load, {
        sessionId: first.session.sessionId,
        cwd: project,
        mcpServers: [],
      }),
      timeout(30000, "session/load"),
    ]);
    return { init, loaded, replayed: log.updates.splice(0) };
  },
);
step("second connection closed");
Object.assign(report, { second });
// The timers of the races above would keep node alive: leave once the report is out.
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(0));
