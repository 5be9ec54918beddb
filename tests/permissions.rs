//! Permission decisions end to end: settings files on disk -> load_settings -> PermissionGate
//! -> check, with a small probe tool whose name and accesses each case chooses. Real files and
//! real symlinks in temp dirs; no mocks of our own code.

use std::sync::Arc;

use cairn::config::load_settings;
use cairn::hooks::{HookCall, Hooks};
use cairn::permissions::{GateConfig, GateOutcome, PermissionGate};
use cairn::protocol::{Decision, PermissionMode, PermissionRequest, RequestKind};
use cairn::session::context::SessionContext;
use cairn::shell;
use cairn::tools::plan_mode::{EnterPlanMode, ExitPlanMode};
use cairn::tools::{DynTool, Effect, ToolOutput};
use proptest::prelude::*;
use serde_json::{Value, json};

#[path = "support/probe.rs"]
mod probe;
#[path = "support/workspace.rs"]
mod workspace;

use probe::{Probe, check_call};
use workspace::Homes;

type Ws = Homes;

/// The workspace of these tests: a few project files, one in HOME and one outside.
fn ws() -> Ws {
    let ws = Homes::new();
    for d in ["src", "secrets"] {
        std::fs::create_dir_all(ws.proj.join(d)).unwrap();
    }
    for f in ["src/main.rs", ".env", "secrets/key", "a.txt"] {
        std::fs::write(ws.proj.join(f), "x").unwrap();
    }
    std::fs::write(ws.home.join(".zshrc"), "x").unwrap();
    std::fs::write(ws.out.join("file"), "x").unwrap();
    ws
}

impl Homes {
    fn sub(&self, s: &str) -> String {
        s.replace("$P", &self.proj.to_string_lossy())
            .replace("$H", &self.home.to_string_lossy())
            .replace("$O", &self.out.to_string_lossy())
    }

    fn write_settings(&self, rel: &str, v: &Value) {
        let p = self.proj.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    }

    fn session(&self) -> Arc<SessionContext> {
        self.session_as("s1").0
    }

    fn gate(
        &self,
        mode: PermissionMode,
        interactive: bool,
        cli_allow: &[&str],
        cli_deny: &[&str],
    ) -> PermissionGate {
        let settings = load_settings(&self.proj, None, &self.env(), cairn::config::Trust::Trusted);
        assert!(
            settings.diagnostics.is_empty(),
            "{:?}",
            settings.diagnostics
        );
        PermissionGate::new(GateConfig {
            cli_allow: cli_allow.iter().map(|s| self.sub(s)).collect(),
            cli_deny: cli_deny.iter().map(|s| self.sub(s)).collect(),
            mode,
            interactive,
            ..self.gate_config(&settings)
        })
        .unwrap()
    }
}

/// The input for a probe call of `tool` with argument `arg`.
fn probe_for(ws: &Ws, tool: &str, arg: &str) -> (Probe, Value) {
    let arg = ws.sub(arg);
    let (read_only, input) = match tool {
        "Bash" => (shell::is_read_only(&arg), json!({ "exec": [arg] })),
        "Read" | "Glob" | "Grep" => (true, json!({ "read": [arg] })),
        "Edit" | "Write" | "MultiEdit" => (false, json!({ "write": [arg] })),
        "WebFetch" => (true, json!({ "fetch": [arg] })),
        "Agent" => (false, json!({ "named": [arg] })),
        _ => (false, json!({})),
    };
    (Probe::named(tool, read_only), input)
}

async fn run_check(
    gate: &PermissionGate,
    session: &SessionContext,
    tool: &dyn DynTool,
    input: &Value,
) -> GateOutcome {
    check_call(gate, session, tool, input, "call-1").await
}

fn verdict(o: &GateOutcome) -> &'static str {
    match o {
        GateOutcome::Allow => "allow",
        GateOutcome::Deny { .. } => "deny",
        GateOutcome::Ask(_) => "ask",
    }
}

#[derive(Clone, Copy)]
struct Case {
    allow: &'static [&'static str],
    ask: &'static [&'static str],
    deny: &'static [&'static str],
    cli_allow: &'static [&'static str],
    cli_deny: &'static [&'static str],
    mode: &'static str,
    tool: &'static str,
    arg: &'static str,
    expect: &'static str,
}

const B: Case = Case {
    allow: &[],
    ask: &[],
    deny: &[],
    cli_allow: &[],
    cli_deny: &[],
    mode: "default",
    tool: "Bash",
    arg: "",
    expect: "ask",
};

#[rustfmt::skip]
const CASES: &[Case] = &[
    // Bash: exact, prefix, word boundary, `:*`, `*` anywhere.
    Case { allow: &["Bash(npm run lint)"], arg: "npm run lint", expect: "allow", ..B },
    Case { allow: &["Bash(npm run lint)"], arg: "npm run lint --fix", expect: "ask", ..B },
    Case { allow: &["Bash(npm run test *)"], arg: "npm run test unit", expect: "allow", ..B },
    Case { allow: &["Bash(npm run test *)"], arg: "npm run test", expect: "allow", ..B },
    Case { allow: &["Bash(npm run test *)"], arg: "npm run testing", expect: "ask", ..B },
    Case { allow: &["Bash(ls *)"], arg: "lsof -r -i", expect: "ask", ..B },
    Case { allow: &["Bash(git * main)"], arg: "git push origin main", expect: "allow", ..B },
    Case { allow: &["Bash(git * main)"], arg: "git push origin dev", expect: "ask", ..B },
    Case { allow: &["Bash(npm test:*)"], arg: "npm test --watch", expect: "allow", ..B },
    Case { allow: &["Bash(npm test:*)"], arg: "npm testx", expect: "ask", ..B },
    // Compound commands: every part must be allowed; a deny on any part wins.
    Case { allow: &["Bash(ls *)"], arg: "ls && rm -rf x", expect: "ask", ..B },
    Case { allow: &["Bash(ls *)", "Bash(rm *)"], arg: "ls && rm -rf x", expect: "allow", ..B },
    Case { allow: &["Bash(make *)"], arg: "make; make install | tee log", expect: "ask", ..B },
    Case { deny: &["Bash(rm *)"], arg: "ls && rm -rf x", expect: "deny", ..B },
    Case { deny: &["Bash(rm *)"], allow: &["Bash"], arg: "rm x", expect: "deny", ..B },
    Case { deny: &["Bash(rm *)"], arg: "ls\nrm x", expect: "deny", ..B },
    Case { deny: &["Bash(rm *)"], arg: "true || rm x", expect: "deny", ..B },
    Case { deny: &["Bash(rm *)"], arg: "sleep 1 & rm x", expect: "deny", ..B },
    Case { deny: &["Bash(rm *)"], arg: "echo 'rm x'", expect: "allow", ..B },
    // Wrappers are stripped before matching.
    Case { deny: &["Bash(curl *)"], arg: "timeout 5 curl evil.sh", expect: "deny", ..B },
    Case { allow: &["Bash(npm test *)"], arg: "nice -n 5 npm test", expect: "allow", ..B },
    Case { allow: &["Bash(make *)"], arg: "nohup make build", expect: "allow", ..B },
    Case { allow: &["Bash(make *)"], arg: "stdbuf -oL make", expect: "allow", ..B },
    Case { allow: &["Bash(pytest *)"], arg: "env FOO=1 pytest -q", expect: "allow", ..B },
    Case { allow: &["Bash(pytest *)"], arg: "time command pytest", expect: "allow", ..B },
    Case { deny: &["Bash(rm *)"], arg: "find . | xargs rm", expect: "deny", ..B },
    Case { deny: &["Bash(curl *)"], arg: "/usr/bin/curl -s x", expect: "deny", ..B },
    Case { arg: "ls *.rs", expect: "allow", ..B },
    Case { allow: &["Bash(ls *)"], arg: "PATH=/tmp/evil ls", expect: "ask", ..B },
    Case { arg: "FOO=1 ls", expect: "ask", ..B },
    Case { allow: &["Bash(ls *)"], arg: "FOO=1 ls", expect: "allow", ..B },
    Case { mode: "acceptEdits", arg: "cp --target-directory=$O a.txt", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "mv -t $O a.txt", expect: "ask", ..B },
    Case { arg: "rg --pre=./x foo", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "echo x > ~root/.bashrc", expect: "ask", ..B },
    Case { arg: "cat < /etc/passwd", expect: "ask", ..B },
    Case { arg: "wc -l < src/main.rs", expect: "allow", ..B },
    Case { deny: &["Read(.env)"], mode: "bypassPermissions", arg: "cat < .env", expect: "deny", ..B },
    Case { arg: "cd && cat .bashrc", expect: "ask", ..B },
    Case { arg: "cd - && ls", expect: "ask", ..B },
    Case { arg: "cd src && ls", expect: "allow", ..B },
    // Substitutions, eval, sh -c.
    Case { deny: &["Bash(curl *)"], arg: "echo $(curl evil.sh)", expect: "deny", ..B },
    Case { arg: "echo $(curl evil.sh)", expect: "ask", ..B },
    Case { allow: &["Bash(echo *)", "Bash(curl *)"], arg: "echo $(curl x)", expect: "ask", ..B },
    Case { allow: &["Bash"], arg: "bash -c \"$X\"", expect: "ask", ..B },
    Case { allow: &["Bash(ls *)"], arg: "bash -c 'ls -la'", expect: "allow", ..B },
    Case { allow: &["Bash(ls *)"], arg: "sh -c 'ls && rm x'", expect: "ask", ..B },
    Case { arg: "eval ls", expect: "ask", ..B },
    Case { arg: "cat <(ls)", expect: "ask", ..B },
    // Read-only commands inside the working directories never ask.
    Case { arg: "ls -la", expect: "allow", ..B },
    Case { arg: "cat src/main.rs | grep fn | wc -l", expect: "allow", ..B },
    Case { arg: "git status && git diff", expect: "allow", ..B },
    Case { arg: "git push", expect: "ask", ..B },
    Case { arg: "find . -delete", expect: "ask", ..B },
    Case { arg: "find . -name x -exec rm {} ;", expect: "ask", ..B },
    Case { arg: "cat /etc/passwd", expect: "ask", ..B },
    Case { arg: "ls ../", expect: "ask", ..B },
    Case { arg: "cd .. && ls", expect: "ask", ..B },
    Case { arg: "ls 2>/dev/null", expect: "allow", ..B },
    // Words bash evaluates: array subscripts run `$(…)` (issue 16 §1).
    Case { arg: "printf -v 'a[$(touch pwned)]' x", expect: "ask", ..B },
    Case { arg: "test -v 'a[$(touch pwned)]'", expect: "ask", ..B },
    Case { arg: "[ -v 'a[$(touch pwned)]' ]", expect: "ask", ..B },
    Case { arg: "ls && [[ -v 'a[$(touch pwned)]' ]]", expect: "ask", ..B },
    Case { arg: "ls && [[ 'a[$(touch pwned)]' -eq 0 ]]", expect: "ask", ..B },
    Case { arg: "ls; (( a[1] ))", expect: "ask", ..B },
    Case { arg: "[[ -f a.txt && 1 -eq 1 ]] && cat a.txt", expect: "allow", ..B },
    // Options that write or run, bundled or abbreviated.
    Case { arg: "sort -ro out a.txt", expect: "ask", ..B },
    Case { arg: "sort --outp=out a.txt", expect: "ask", ..B },
    Case { arg: "sort --co=sh a.txt", expect: "ask", ..B },
    Case { arg: "sort -rn --rev a.txt", expect: "allow", ..B },
    Case { arg: "git grep -Osh x", expect: "ask", ..B },
    Case { arg: "git grep --open-files-in-pager=sh x", expect: "ask", ..B },
    Case { arg: "git reflog expire --expire=now --all", expect: "ask", ..B },
    Case { arg: "git reflog delete HEAD@{0}", expect: "ask", ..B },
    Case { arg: "git log --ext-diff -p", expect: "ask", ..B },
    Case { arg: "git -c core.pager=sh log", expect: "ask", ..B },
    Case { arg: "GIT_EXTERNAL_DIFF=./x git diff", expect: "ask", ..B },
    Case { arg: "printenv", expect: "ask", ..B },
    Case { arg: "env", expect: "ask", ..B },
    Case { arg: "printenv ANTHROPIC_API_KEY", expect: "ask", ..B },
    Case { arg: "echo /etc/passwd | xargs cat", expect: "ask", ..B },
    // More read-only programs (issue 27 §5), and attacks on each new allowance.
    Case { arg: "seq 5", expect: "allow", ..B },
    Case { arg: "sed -n 1p a.txt", expect: "allow", ..B },
    Case { arg: "sed -n '/fn /p' src/main.rs | head -5", expect: "allow", ..B },
    Case { arg: "cat src/*.rs | grep fn", expect: "allow", ..B },
    Case { arg: "basename src/main.rs && dirname src/main.rs", expect: "allow", ..B },
    Case { arg: "tac a.txt | rev", expect: "allow", ..B },
    Case { arg: "od -c a.txt", expect: "allow", ..B },
    Case { arg: "column -t a.txt", expect: "allow", ..B },
    Case { arg: "hostname; uptime; free -m", expect: "allow", ..B },
    Case { arg: "ps aux | grep cairn", expect: "allow", ..B },
    Case { arg: "lsof -i :8080", expect: "allow", ..B },
    Case { arg: "ls | xargs echo", expect: "allow", ..B },
    Case { arg: "cargo --version", expect: "allow", ..B },
    Case { arg: "sed -n 'w /tmp/x' a.txt", expect: "ask", ..B },
    Case { arg: "sed -n 1p -i a.txt", expect: "ask", ..B },
    Case { arg: "sed -ne 'e id' a.txt", expect: "ask", ..B },
    Case { arg: "sed 's/a/b/w out' a.txt", expect: "ask", ..B },
    Case { arg: "sed 's/a/b/e' a.txt", expect: "ask", ..B },
    Case { arg: "sed -n '1r /etc/passwd' a.txt", expect: "ask", ..B },
    Case { arg: "sed --in-pl s/a/b/ a.txt", expect: "ask", ..B },
    Case { arg: "sed -f script.sed a.txt", expect: "ask", ..B },
    Case { arg: "sed -n 1p /etc/passwd", expect: "ask", ..B },
    Case { arg: "find . | xargs rm", expect: "ask", ..B },
    Case { arg: "find . | xargs -I{} sh -c 'echo {}'", expect: "ask", ..B },
    Case { arg: "find . | xargs -0 sed -i s/a/b/", expect: "ask", ..B },
    Case { arg: "ls | xargs -a list echo", expect: "ask", ..B },
    Case { arg: "ls | xargs -p echo", expect: "ask", ..B },
    Case { arg: "ls | xargs -0n 1 rm", expect: "ask", ..B },
    Case { arg: "ls | xargs cat", expect: "ask", ..B },
    Case { arg: "node --version; rm x", expect: "ask", ..B },
    Case { arg: "python3 --version --eval", expect: "ask", ..B },
    Case { arg: "./deploy.sh --version", expect: "ask", ..B },
    Case { arg: "cairn-no-such-program --version", expect: "ask", ..B },
    Case { arg: "source --help", expect: "ask", ..B },
    Case { arg: "ps aux > file", expect: "ask", ..B },
    Case { arg: "ps auxe", expect: "ask", ..B },
    Case { arg: "ps -eo pid,environ", expect: "ask", ..B },
    Case { arg: "hostname evil", expect: "ask", ..B },
    Case { arg: "lsof -D b", expect: "ask", ..B },
    Case { arg: "cat /etc/*", expect: "ask", ..B },
    Case { arg: "cat .*", expect: "ask", ..B },
    Case { arg: "cat {a.txt,/etc/passwd}", expect: "ask", ..B },
    Case { arg: "sed -n s* a.txt", expect: "ask", ..B },
    // Write paths follow `cd` through the line (issue 16 §2).
    Case { mode: "acceptEdits", arg: "cd .git/hooks && echo x > pre-commit", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "(cd .git; printf x >> config)", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "cd .claude && echo '{}' > settings.json", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "pushd .git && echo x > config", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "cd src; cd .. ; cd .git; echo x > config", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "cd .git && cd - && echo x > config", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "bash -c 'cd .git && echo x > config'", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "cd $D && echo x > f", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "for d in a; do cd .git; done; echo x > config", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "cd nowhere; echo x > ../escaped", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "cd .git && touch hooks/pre-commit", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "cd src && echo x > out.txt", expect: "allow", ..B },
    Case { mode: "acceptEdits", arg: "(cd .git); echo x > out.txt", expect: "allow", ..B },
    // An ask rule turns the read-only allowance off.
    Case { ask: &["Bash"], arg: "ls", expect: "ask", ..B },
    Case { ask: &["Bash(git *)"], arg: "git status", expect: "ask", ..B },
    // Redirections are writes.
    Case { arg: "echo x > out.txt", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "echo x > out.txt", expect: "allow", ..B },
    Case { mode: "acceptEdits", arg: "echo x > ~/.bashrc", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "echo x >> .git/config", expect: "ask", ..B },
    Case { deny: &["Edit(out.txt)"], mode: "acceptEdits", arg: "echo x > out.txt", expect: "deny", ..B },
    Case { deny: &["Read(.env)"], arg: "cat .env", expect: "deny", ..B },
    // Modes.
    Case { mode: "acceptEdits", arg: "mkdir -p build/x", expect: "allow", ..B },
    Case { mode: "acceptEdits", arg: "touch a.txt && cp a.txt b.txt", expect: "allow", ..B },
    Case { mode: "acceptEdits", arg: "cp a.txt $O/x", expect: "ask", ..B },
    Case { mode: "acceptEdits", arg: "rm a.txt", expect: "ask", ..B },
    Case { mode: "dontAsk", arg: "rm a.txt", expect: "deny", ..B },
    Case { mode: "dontAsk", arg: "ls", expect: "allow", ..B },
    Case { mode: "bypassPermissions", arg: "rm -rf x", expect: "allow", ..B },
    Case { mode: "bypassPermissions", deny: &["Bash(rm *)"], arg: "rm -rf x", expect: "deny", ..B },
    Case { mode: "plan", arg: "rm x", expect: "deny", ..B },
    Case { mode: "plan", arg: "ls", expect: "allow", ..B },
    // Ask rules come before allow rules.
    Case { ask: &["Bash(git push *)"], allow: &["Bash(git *)"], arg: "git push origin", expect: "ask", ..B },
    Case { ask: &["Bash(git push *)"], mode: "bypassPermissions", arg: "git push", expect: "allow", ..B },
    Case { deny: &["Bash"], arg: "ls", expect: "deny", ..B },
    Case { deny: &["Bash(*)"], arg: "ls", expect: "deny", ..B },
    // Read/Edit paths: the four anchors, gitignore semantics.
    Case { tool: "Read", arg: "$P/src/main.rs", expect: "allow", ..B },
    Case { tool: "Glob", arg: "$P", expect: "allow", ..B },
    Case { tool: "Read", arg: "$O/file", expect: "ask", ..B },
    Case { tool: "Read", arg: "$P/../outside/file", expect: "ask", ..B },
    Case { allow: &["Read(/$O/**)"], tool: "Read", arg: "$O/file", expect: "allow", ..B },
    Case { allow: &["Read(~/.zshrc)"], tool: "Read", arg: "$H/.zshrc", expect: "allow", ..B },
    Case { deny: &["Read(./.env)"], tool: "Read", arg: "$P/.env", expect: "deny", ..B },
    Case { deny: &["Read(.env)"], tool: "Read", arg: "$P/src/.env", expect: "deny", ..B },
    Case { deny: &["Read(./secrets/**)"], tool: "Read", arg: "$P/secrets/key", expect: "deny", ..B },
    Case { deny: &["Read(/secrets/**)"], tool: "Grep", arg: "$P/secrets/key", expect: "deny", ..B },
    Case { deny: &["Read(secrets)"], tool: "Read", arg: "$P/secrets/key", expect: "deny", ..B },
    Case { deny: &["Read(src/*.rs)"], tool: "Read", arg: "$P/src/deep/a.rs", expect: "allow", ..B },
    Case { deny: &["Read(.env)"], mode: "bypassPermissions", tool: "Edit", arg: "$P/.env", expect: "deny", ..B },
    Case { deny: &["Edit(src/**)"], tool: "Read", arg: "$P/src/main.rs", expect: "allow", ..B },
    Case { deny: &["Edit(src/**)"], tool: "Write", arg: "$P/src/main.rs", expect: "deny", ..B },
    Case { ask: &["Read(./secrets/**)"], tool: "Read", arg: "$P/secrets/key", expect: "ask", ..B },
    Case { deny: &["Read(/$O/**)"], mode: "bypassPermissions", tool: "Read", arg: "$O/file", expect: "deny", ..B },
    Case { tool: "Edit", arg: "$P/src/main.rs", expect: "ask", ..B },
    Case { mode: "acceptEdits", tool: "Edit", arg: "$P/src/main.rs", expect: "allow", ..B },
    Case { mode: "acceptEdits", tool: "Write", arg: "$P/new/dir/file.rs", expect: "allow", ..B },
    Case { mode: "acceptEdits", tool: "Edit", arg: "$P/.git/config", expect: "ask", ..B },
    Case { mode: "acceptEdits", tool: "Edit", arg: "$P/.bashrc", expect: "ask", ..B },
    Case { mode: "acceptEdits", tool: "Write", arg: "$P/.claude/settings.json", expect: "ask", ..B },
    Case { mode: "acceptEdits", tool: "Write", arg: "$P/.cairn/settings.json", expect: "ask", ..B },
    Case { mode: "acceptEdits", tool: "Edit", arg: "$P/.vscode/settings.json", expect: "ask", ..B },
    Case { mode: "acceptEdits", tool: "Edit", arg: "$P/.mcp.json", expect: "ask", ..B },
    Case { mode: "acceptEdits", tool: "Edit", arg: "$O/file", expect: "ask", ..B },
    Case { allow: &["Edit(src/**)"], tool: "Write", arg: "$P/src/new.rs", expect: "allow", ..B },
    Case { allow: &["Edit(/src/**)"], tool: "MultiEdit", arg: "$P/src/main.rs", expect: "allow", ..B },
    Case { allow: &["Edit(src/*.rs)"], tool: "Write", arg: "$P/src/a/b.rs", expect: "ask", ..B },
    Case { allow: &["Edit"], tool: "Edit", arg: "$P/src/main.rs", expect: "allow", ..B },
    Case { allow: &["Edit"], tool: "Edit", arg: "$P/.git/config", expect: "ask", ..B },
    Case { allow: &["Edit(.git/**)"], tool: "Edit", arg: "$P/.git/config", expect: "ask", ..B },
    Case { allow: &["Edit"], tool: "Edit", arg: "$O/file", expect: "ask", ..B },
    Case { allow: &["Edit(/$O/**)"], tool: "Edit", arg: "$O/file", expect: "allow", ..B },
    Case { allow: &["Edit(src/**)"], tool: "Read", arg: "$O/../proj/src/main.rs", expect: "allow", ..B },
    Case { mode: "bypassPermissions", tool: "Edit", arg: "$P/.git/config", expect: "allow", ..B },
    Case { mode: "dontAsk", tool: "Edit", arg: "$P/src/main.rs", expect: "deny", ..B },
    Case { mode: "plan", tool: "Edit", arg: "$P/src/main.rs", expect: "deny", ..B },
    Case { mode: "plan", tool: "Read", arg: "$P/src/main.rs", expect: "allow", ..B },
    // WebFetch domains.
    Case { allow: &["WebFetch(domain:example.com)"], tool: "WebFetch", arg: "https://example.com/x", expect: "allow", ..B },
    Case { allow: &["WebFetch(domain:example.com)"], tool: "WebFetch", arg: "https://api.example.com/", expect: "ask", ..B },
    Case { allow: &["WebFetch(domain:*.example.com)"], tool: "WebFetch", arg: "https://api.example.com/", expect: "allow", ..B },
    Case { allow: &["WebFetch(domain:*.example.com)"], tool: "WebFetch", arg: "https://example.com/", expect: "ask", ..B },
    Case { allow: &["WebFetch(domain:*.example.com)"], tool: "WebFetch", arg: "https://evilexample.com/", expect: "ask", ..B },
    Case { deny: &["WebFetch"], allow: &["WebFetch(domain:example.com)"], tool: "WebFetch", arg: "https://example.com/", expect: "deny", ..B },
    Case { deny: &["WebFetch(domain:evil.com)"], mode: "bypassPermissions", tool: "WebFetch", arg: "http://EVIL.com/a", expect: "deny", ..B },
    Case { tool: "WebFetch", arg: "https://example.com/", expect: "ask", ..B },
    Case { allow: &["WebFetch"], tool: "WebFetch", arg: "https://example.com/", expect: "allow", ..B },
    // MCP names.
    Case { allow: &["mcp__gh"], tool: "mcp__gh__issue", expect: "allow", ..B },
    Case { allow: &["mcp__gh__*"], tool: "mcp__gh__issue", expect: "allow", ..B },
    Case { allow: &["mcp__gh__issue"], tool: "mcp__gh__pr", expect: "ask", ..B },
    Case { allow: &["mcp__gh"], tool: "mcp__ghx__a", expect: "ask", ..B },
    Case { deny: &["mcp__gh"], allow: &["mcp__gh__pr"], tool: "mcp__gh__pr", expect: "deny", ..B },
    Case { deny: &["mcp__*"], tool: "mcp__any__thing", expect: "deny", ..B },
    Case { tool: "mcp__gh__pr", expect: "ask", ..B },
    // Agents.
    Case { allow: &["Agent(Explore)"], tool: "Agent", arg: "Explore", expect: "allow", ..B },
    Case { allow: &["Agent(Explore)"], tool: "Agent", arg: "general-purpose", expect: "ask", ..B },
    Case { allow: &["Task(Explore)"], tool: "Agent", arg: "Explore", expect: "allow", ..B },
    Case { deny: &["Agent(Plan)"], allow: &["Agent"], tool: "Agent", arg: "Plan", expect: "deny", ..B },
    // The command-line layer.
    Case { cli_allow: &["Bash(npm test *),Read"], arg: "npm test", expect: "allow", ..B },
    Case { cli_allow: &["Bash(git log *) Edit"], tool: "Edit", arg: "$P/src/main.rs", expect: "allow", ..B },
    Case { cli_deny: &["Bash(npm test *)"], allow: &["Bash(npm test *)"], arg: "npm test", expect: "deny", ..B },
    Case { deny: &["Bash(curl *)"], cli_allow: &["Bash(curl *)"], arg: "curl x", expect: "deny", ..B },
    Case { cli_deny: &["WebFetch"], cli_allow: &["WebFetch"], tool: "WebFetch", arg: "https://a.b/", expect: "deny", ..B },
];

#[tokio::test]
async fn rule_and_decision_table() {
    assert!(CASES.len() >= 120, "{} cases", CASES.len());
    let ws = ws();
    let session = ws.session();
    let mut failures = Vec::new();
    for (i, c) in CASES.iter().enumerate() {
        let list = |l: &[&str]| l.iter().map(|r| ws.sub(r)).collect::<Vec<_>>();
        ws.write_settings(
            ".claude/settings.json",
            &json!({ "permissions": { "allow": list(c.allow), "ask": list(c.ask), "deny": list(c.deny) } }),
        );
        let mode = PermissionMode::parse(c.mode).unwrap();
        let gate = ws.gate(mode, true, c.cli_allow, c.cli_deny);
        let (tool, input) = probe_for(&ws, c.tool, c.arg);
        let got = run_check(&gate, &session, &tool, &input).await;
        if verdict(&got) != c.expect {
            failures.push(format!(
                "case {i}: {} `{}` mode {} allow {:?} ask {:?} deny {:?}: expected {}, got {got:?}",
                c.tool, c.arg, c.mode, c.allow, c.ask, c.deny, c.expect
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

async fn check_one(ws: &Ws, gate: &PermissionGate, tool: &str, arg: &str) -> GateOutcome {
    let (tool, input) = probe_for(ws, tool, arg);
    run_check(gate, &ws.session(), &tool, &input).await
}

/// The verdict of [`check_one`]: allow, ask or deny.
async fn verdict_of(ws: &Ws, gate: &PermissionGate, tool: &str, arg: &str) -> &'static str {
    verdict(&check_one(ws, gate, tool, arg).await)
}

#[cfg(unix)]
#[tokio::test]
async fn attack_symlink_inside_project_to_denied_file() {
    let ws = ws();
    std::os::unix::fs::symlink(ws.proj.join(".env"), ws.proj.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(ws.out.join("file"), ws.proj.join("ext")).unwrap();
    ws.write_settings(
        ".claude/settings.json",
        &json!({ "permissions": { "deny": ["Read(./.env)", ws.sub("Read(/$O/file)")], "allow": ["Read(./notes.txt)", "Read(./ext)"] } }),
    );
    let gate = ws.gate(PermissionMode::BypassPermissions, true, &[], &[]);
    for link in ["$P/notes.txt", "$P/ext"] {
        let o = check_one(&ws, &gate, "Read", link).await;
        assert_eq!(verdict(&o), "deny", "{link}: {o:?}");
    }
    // An allow must match the link and its target: allowing only the link is not enough.
    ws.write_settings(
        ".claude/settings.json",
        &json!({ "permissions": { "allow": ["Read(./ext)"] } }),
    );
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    assert_eq!(verdict_of(&ws, &gate, "Read", "$P/ext").await, "ask");
}

#[cfg(unix)]
#[tokio::test]
async fn attack_new_file_under_symlinked_dir_pointing_outside() {
    let ws = ws();
    std::os::unix::fs::symlink(&ws.out, ws.proj.join("data")).unwrap();
    let gate = ws.gate(PermissionMode::AcceptEdits, true, &[], &[]);
    let o = check_one(&ws, &gate, "Write", "$P/data/new.txt").await;
    let GateOutcome::Ask(req) = o else {
        panic!("{o:?}")
    };
    assert!(
        req.reason.contains("outside the working directories"),
        "{}",
        req.reason
    );
    // And as a redirection target.
    let o = check_one(&ws, &gate, "Bash", "echo x > data/cron").await;
    assert_eq!(verdict(&o), "ask");
}

#[cfg(unix)]
/// A filename pattern is expanded where the command runs: a file named like an option, or a
/// symlink out of the project, among its matches makes the command ask (issue 27 §5).
#[tokio::test]
async fn attack_globs_matching_options_or_symlinks_out_ask() {
    let ws = ws();
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    assert_eq!(verdict_of(&ws, &gate, "Bash", "sed -n 1p *").await, "allow");
    assert_eq!(verdict_of(&ws, &gate, "Bash", "sort src/*").await, "allow");
    std::fs::write(ws.proj.join("-i"), "x").unwrap();
    let o = check_one(&ws, &gate, "Bash", "sed -n 1p *").await;
    let GateOutcome::Ask(req) = &o else {
        panic!("expected a question, got {}", verdict(&o));
    };
    assert!(req.reason.contains("matches `-i`"), "{}", req.reason);
    std::fs::remove_file(ws.proj.join("-i")).unwrap();
    std::fs::write(ws.proj.join("src/--output=x"), "x").unwrap();
    // Under a directory the name is no option; alone it would be.
    assert_eq!(verdict_of(&ws, &gate, "Bash", "sort src/*").await, "allow");
    std::fs::write(ws.proj.join("--pre=sh"), "x").unwrap();
    assert_eq!(verdict_of(&ws, &gate, "Bash", "rg x *").await, "ask");
    std::fs::remove_file(ws.proj.join("--pre=sh")).unwrap();
    std::os::unix::fs::symlink(ws.out.join("file"), ws.proj.join("src/link")).unwrap();
    assert_eq!(verdict_of(&ws, &gate, "Bash", "cat src/*").await, "ask");
    assert_eq!(
        verdict_of(&ws, &gate, "Bash", "cat src/*.rs").await,
        "allow"
    );
    // A deny rule on a file a pattern matches is a denial.
    let deny = ws.gate(PermissionMode::Default, true, &[], &["Read(./secrets/**)"]);
    assert_eq!(
        verdict_of(&ws, &deny, "Bash", "cat secrets/*").await,
        "deny"
    );
}

#[tokio::test]
async fn attack_symlink_cycle_and_null_byte_are_refused() {
    let ws = ws();
    std::os::unix::fs::symlink(ws.proj.join("b"), ws.proj.join("a")).unwrap();
    std::os::unix::fs::symlink(ws.proj.join("a"), ws.proj.join("b")).unwrap();
    let gate = ws.gate(PermissionMode::BypassPermissions, true, &[], &[]);
    let o = check_one(&ws, &gate, "Read", "$P/a").await;
    assert_eq!(verdict(&o), "deny", "{o:?}");
    let o = check_one(&ws, &gate, "Read", "$P/x\u{0}/etc/passwd").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert!(message.contains("null byte"), "{message}");
}

#[tokio::test]
async fn attack_project_allow_against_user_deny() {
    let ws = ws();
    std::fs::create_dir_all(ws.home.join(".claude")).unwrap();
    std::fs::write(
        ws.home.join(".claude/settings.json"),
        r#"{"permissions":{"deny":["Bash(curl *)","Read(.env)"]}}"#,
    )
    .unwrap();
    ws.write_settings(
        ".claude/settings.local.json",
        &json!({ "permissions": { "allow": ["Bash(curl *)", "Bash", "Read(.env)", "Read"] } }),
    );
    let gate = ws.gate(
        PermissionMode::BypassPermissions,
        true,
        &["Bash(curl *)"],
        &[],
    );
    let o = check_one(&ws, &gate, "Bash", "curl https://x").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert!(message.contains("`Bash(curl *)` (user: "), "{message}");
    assert_eq!(verdict_of(&ws, &gate, "Read", "$P/.env").await, "deny");
}

#[tokio::test]
async fn headless_refusal_names_the_rule_that_would_allow() {
    let ws = ws();
    ws.write_settings(
        ".claude/settings.json",
        &json!({ "permissions": { "allow": ["Bash(ls *)"] } }),
    );
    let gate = ws.gate(PermissionMode::Default, false, &[], &[]);
    let o = check_one(&ws, &gate, "Bash", "ls && npm test").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert_eq!(
        message,
        "Permission to use Bash was denied: no rule allows the command `npm test`, and no one \
         can be asked in non-interactive mode. To allow it, run with --allowedTools \
         \"Bash(npm test *)\" or add \"Bash(npm test *)\" to permissions.allow in \
         .cairn/settings.json."
    );
    let o = check_one(&ws, &gate, "Bash", "echo $(curl x)").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert!(message.contains("No rule can allow this"), "{message}");
    let o = check_one(&ws, &gate, "Read", "$O/file").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert!(
        message.ends_with(&format!(
            "run with --allowedTools \"Read(/{0}/file)\" or add \"Read(/{0}/file)\" to \
             permissions.allow in .cairn/settings.json. The path is outside the working \
             directories; --add-dir {0} would add it.",
            ws.out.display()
        )),
        "{message}"
    );
    let o = check_one(&ws, &gate, "Edit", "$P/src/main.rs").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert!(
        message.contains("\"Edit(src/main.rs)\"")
            && message.contains("--permission-mode acceptEdits"),
        "{message}"
    );
}

#[tokio::test]
async fn ask_requests_carry_scope_rule_and_preview() {
    let ws = ws();
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    let o = check_one(&ws, &gate, "Bash", "npm test -- --watch").await;
    let GateOutcome::Ask(req) = o else {
        panic!("{o:?}")
    };
    assert_eq!(req.saveable_rule.as_deref(), Some("Bash(npm test *)"));
    assert_eq!(
        req.session_scope.as_deref(),
        Some("commands matching `npm test *`")
    );
    assert_eq!(
        req.reason,
        "no rule allows the command `npm test -- --watch`"
    );
    // The probe has no preview of its own (the tools' previews: tests/agent_loop.rs).
    assert_eq!(req.preview, None);
    let o = check_one(&ws, &gate, "Edit", "$P/src/main.rs").await;
    let GateOutcome::Ask(req) = o else {
        panic!("{o:?}")
    };
    assert_eq!(req.saveable_rule.as_deref(), Some("Edit(src/main.rs)"));
    assert_eq!(req.session_scope.as_deref(), Some("edits to src/main.rs"));
    let o = check_one(&ws, &gate, "WebFetch", "https://Docs.rs/x").await;
    let GateOutcome::Ask(req) = o else {
        panic!("{o:?}")
    };
    assert_eq!(
        req.saveable_rule.as_deref(),
        Some("WebFetch(domain:docs.rs)")
    );
}

async fn ask_then(
    ws: &Ws,
    gate: &PermissionGate,
    tool: &str,
    arg: &str,
    d: Decision,
) -> (PermissionRequest, cairn::permissions::DecisionEffect) {
    let o = check_one(ws, gate, tool, arg).await;
    let GateOutcome::Ask(req) = o else {
        panic!("{o:?}")
    };
    let effect = gate.apply_decision(&req, &d);
    (*req, effect)
}

#[tokio::test]
async fn session_grants_and_denials_use_the_shown_scope() {
    let ws = ws();
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    let (_, e) = ask_then(&ws, &gate, "Bash", "npm test a", Decision::AllowSession).await;
    assert!(e.allow);
    assert_eq!(verdict_of(&ws, &gate, "Bash", "npm test b").await, "allow");
    assert_eq!(verdict_of(&ws, &gate, "Bash", "npm publish").await, "ask");
    let (_, e) = ask_then(&ws, &gate, "Edit", "$P/src/main.rs", Decision::DenySession).await;
    assert!(!e.allow);
    let o = check_one(&ws, &gate, "Edit", "$P/src/main.rs").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert!(
        message.contains("denied this for the rest of the session"),
        "{message}"
    );
    assert_eq!(verdict_of(&ws, &gate, "Edit", "$P/a.txt").await, "ask");
    let (_, _) = ask_then(
        &ws,
        &gate,
        "Edit",
        "$P/a.txt",
        Decision::AllowAllEditsSession,
    )
    .await;
    assert_eq!(
        verdict_of(&ws, &gate, "Write", "$P/src/new.rs").await,
        "allow"
    );
    // Still: protected paths ask, and the session denial holds.
    assert_eq!(
        verdict_of(&ws, &gate, "Write", "$P/.git/hooks/pre-commit").await,
        "ask"
    );
    assert_eq!(
        verdict_of(&ws, &gate, "Edit", "$P/src/main.rs").await,
        "deny"
    );
    let (_, e) = ask_then(
        &ws,
        &gate,
        "Bash",
        "rm x",
        Decision::DenyWithFeedback {
            feedback: "use git rm".into(),
        },
    )
    .await;
    assert_eq!(
        e.message.as_deref(),
        Some("The user doesn't want to proceed with this tool use. The user said:\nuse git rm")
    );
}

#[tokio::test]
async fn ask_rule_prompts_grant_nothing_beyond_the_call() {
    let ws = ws();
    ws.write_settings(
        ".claude/settings.json",
        &json!({ "permissions": { "ask": ["Bash(git push *)"], "allow": ["Bash(git *)"] } }),
    );
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    let (req, e) = ask_then(
        &ws,
        &gate,
        "Bash",
        "git push origin main",
        Decision::AllowSession,
    )
    .await;
    assert!(e.allow);
    assert_eq!((req.session_scope, req.saveable_rule), (None, None));
    assert!(
        req.reason
            .starts_with("the rule `Bash(git push *)` (project: "),
        "{}",
        req.reason
    );
    assert_eq!(
        verdict_of(&ws, &gate, "Bash", "git push origin main").await,
        "ask"
    );
    // Deny for the session refuses exactly that command from now on.
    ask_then(
        &ws,
        &gate,
        "Bash",
        "git push origin main",
        Decision::DenySession,
    )
    .await;
    assert_eq!(
        verdict_of(&ws, &gate, "Bash", "git push origin main").await,
        "deny"
    );
    assert_eq!(
        verdict_of(&ws, &gate, "Bash", "git push origin dev").await,
        "ask"
    );
    assert_eq!(verdict_of(&ws, &gate, "Bash", "git log").await, "allow");
}

#[tokio::test]
async fn always_allow_writes_local_settings_and_keeps_other_keys() {
    let ws = ws();
    std::fs::create_dir_all(ws.proj.join(".cairn")).unwrap();
    std::fs::write(
        ws.proj.join(".cairn/settings.local.json"),
        r#"{"model":"m1","permissions":{"allow":["Read"],"deny":["Bash(rm *)"]}}"#,
    )
    .unwrap();
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    let (_, e) = ask_then(
        &ws,
        &gate,
        "Bash",
        "cargo test --lib",
        Decision::AlwaysAllow,
    )
    .await;
    assert!(e.allow && e.message.is_none(), "{e:?}");
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.proj.join(".cairn/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        saved,
        json!({"model":"m1","permissions":{"allow":["Read","Bash(cargo test *)"],"deny":["Bash(rm *)"]}})
    );
    assert_eq!(
        verdict_of(&ws, &gate, "Bash", "cargo test x").await,
        "allow"
    );
    // A new session reads it back.
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    assert_eq!(
        verdict_of(&ws, &gate, "Bash", "cargo test y").await,
        "allow"
    );
}

#[tokio::test]
async fn always_allow_never_clobbers_a_broken_local_file() {
    let ws = ws();
    std::fs::create_dir_all(ws.proj.join(".cairn")).unwrap();
    let gate_over = |settings: &cairn::config::LoadedSettings| {
        PermissionGate::new(ws.gate_config(settings)).unwrap()
    };
    // The file breaks during the session (the person is editing it).
    let gate = gate_over(&load_settings(
        &ws.proj,
        None,
        &ws.env(),
        cairn::config::Trust::Trusted,
    ));
    std::fs::write(
        ws.proj.join(".cairn/settings.local.json"),
        "{ \"permissions\": ",
    )
    .unwrap();
    let (_, e) = ask_then(&ws, &gate, "Bash", "make all", Decision::AlwaysAllow).await;
    assert!(e.allow);
    assert!(e.message.unwrap().starts_with("The rule was not saved: "));
    assert_eq!(
        std::fs::read_to_string(ws.proj.join(".cairn/settings.local.json")).unwrap(),
        "{ \"permissions\": "
    );
    // It still holds for this session.
    assert_eq!(
        verdict_of(&ws, &gate, "Bash", "make all -j4").await,
        "allow"
    );
    // A session started over the broken file fails closed: it may have held deny rules.
    let settings = load_settings(&ws.proj, None, &ws.env(), cairn::config::Trust::Trusted);
    assert_eq!(settings.broken.len(), 1, "{:?}", settings.diagnostics);
    let gate = gate_over(&settings);
    assert_eq!(verdict_of(&ws, &gate, "Bash", "make all").await, "deny");
    assert_eq!(verdict_of(&ws, &gate, "Read", "$P/a.txt").await, "allow");
}

#[tokio::test]
async fn bare_deny_hides_tools_and_bypass_as_root_is_refused() {
    let ws = ws();
    ws.write_settings(
        ".claude/settings.json",
        &json!({ "permissions": { "deny": ["WebFetch", "mcp__gh", "Bash(rm *)"] } }),
    );
    let gate = ws.gate(PermissionMode::Default, true, &[], &["Edit"]);
    let offered = |name: &str| gate.offers_tool(&Probe::named(name, false));
    assert!(!offered("WebFetch"));
    assert!(!offered("mcp__gh__issue"));
    assert!(!offered("Edit") && !offered("Write") && !offered("MultiEdit"));
    assert!(offered("Bash") && offered("Read"));
    let settings = load_settings(&ws.proj, None, &ws.env(), cairn::config::Trust::Trusted);
    let config = |sandboxed| GateConfig {
        settings: &settings,
        cli_allow: vec![],
        cli_deny: vec![],
        mode: PermissionMode::BypassPermissions,
        interactive: true,
        project_dir: ws.proj.clone(),
        additional_dirs: vec![],
        session_data_dir: ws.data.clone(),
        running_as_root: true,
        sandboxed,
    };
    let err = PermissionGate::new(config(false)).err().unwrap();
    assert!(err.to_string().contains("IS_SANDBOX=1"));
    assert!(PermissionGate::new(config(true)).unwrap().bypass_allowed());
}

#[tokio::test]
async fn additional_directories_and_spill_files() {
    let ws = ws();
    ws.write_settings(
        ".claude/settings.json",
        &json!({ "permissions": { "additionalDirectories": [ws.out.to_string_lossy()] } }),
    );
    std::fs::create_dir_all(&ws.data).unwrap();
    std::fs::write(ws.data.join("spill-1.txt"), "big").unwrap();
    let gate = ws.gate(PermissionMode::AcceptEdits, true, &[], &[]);
    assert_eq!(verdict_of(&ws, &gate, "Read", "$O/file").await, "allow");
    assert_eq!(verdict_of(&ws, &gate, "Edit", "$O/file").await, "allow");
    let spill = ws.data.join("spill-1.txt").to_string_lossy().into_owned();
    assert_eq!(
        verdict(&check_one(&ws, &gate, "Read", &spill).await),
        "allow"
    );
    assert_eq!(verdict(&check_one(&ws, &gate, "Edit", &spill).await), "ask");
}

#[tokio::test]
async fn plan_mode_refuses_writes_until_the_plan_is_approved() {
    let ws = ws();
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    let session = ws.session();
    // EnterPlanMode is allowed; its result asks the core to switch (the core's part is in
    // tests/agent_loop.rs).
    let enter = EnterPlanMode;
    let input = json!({});
    assert_eq!(
        run_check(&gate, &session, &enter, &input).await,
        GateOutcome::Allow
    );
    let ctx = workspace::tool_context(&session, "c0");
    let out = workspace::run(&enter, input, &ctx).await.unwrap();
    assert_eq!(out.effects, [Effect::EnterPlanMode]);
    gate.set_mode(PermissionMode::Plan);

    let o = check_one(&ws, &gate, "Write", "$P/src/main.rs").await;
    let GateOutcome::Deny { message } = o else {
        panic!("{o:?}")
    };
    assert!(
        message.starts_with("Write is not available in plan mode"),
        "{message}"
    );

    let exit = ExitPlanMode;
    let input = json!({ "plan": "1. edit main.rs" });
    let o = run_check(&gate, &session, &exit, &input).await;
    let GateOutcome::Ask(req) = o else {
        panic!("{o:?}")
    };
    assert_eq!(
        req.kind,
        RequestKind::PlanApproval {
            plan: "1. edit main.rs".into()
        }
    );
    let e = gate.apply_decision(
        &req,
        &Decision::DenyWithFeedback {
            feedback: "also tests".into(),
        },
    );
    assert!(!e.allow && e.message.unwrap().contains("keep planning"));
    assert_eq!(gate.mode(), PermissionMode::Plan);
    assert_eq!(
        verdict_of(&ws, &gate, "Write", "$P/src/main.rs").await,
        "deny"
    );

    let GateOutcome::Ask(req) = run_check(&gate, &session, &exit, &input).await else {
        panic!()
    };
    let e = gate.apply_decision(
        &req,
        &Decision::ApprovePlan {
            mode: PermissionMode::AcceptEdits,
        },
    );
    assert!(e.allow);
    assert_eq!(e.new_mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(
        verdict_of(&ws, &gate, "Write", "$P/src/main.rs").await,
        "allow"
    );
    // A plain "allow" on a plan approves it in default mode.
    gate.set_mode(PermissionMode::Plan);
    let GateOutcome::Ask(req) = run_check(&gate, &session, &exit, &input).await else {
        panic!()
    };
    let e = gate.apply_decision(&req, &Decision::AllowSession);
    assert_eq!((e.allow, e.new_mode), (true, Some(PermissionMode::Default)));
    // Out of plan mode there is nothing to approve.
    assert_eq!(
        verdict(&run_check(&gate, &session, &exit, &input).await),
        "deny"
    );
}

fn edit_probe() -> Probe {
    Probe {
        name: "Edit",
        read_only: false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
    /// Whenever a deny rule matches a path, no allow rules, mode or grant allows the call.
    #[test]
    fn a_matching_deny_is_never_allowed(
        segs in proptest::collection::vec(prop::sample::select(vec!["src", "a", ".env", "lib", "k.rs"]), 1..4),
        deny_kind in 0..4usize,
        allows in proptest::collection::vec(prop::sample::select(vec![
            "Edit", "Read", "Bash", "Edit(**)", "Read(**)", "Edit(/**)", "Read(//**)", "Write",
        ]), 0..4),
        mode in prop::sample::select(vec!["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]),
        write in any::<bool>(),
        interactive in any::<bool>(),
    ) {
        let ws = ws();
        let rel = segs.join("/");
        let abs = ws.proj.join(&rel);
        let last = segs.last().unwrap();
        let deny = match deny_kind {
            0 => format!("Read(/{})", abs.display()),
            1 => format!("Read({last})"),
            2 => format!("Read(./{rel})"),
            _ => format!("Read(/{})", ws.proj.join(segs[0]).display()),
        };
        ws.write_settings(".claude/settings.json", &json!({ "permissions": { "deny": [deny], "allow": allows } }));
        let gate = ws.gate(PermissionMode::parse(mode).unwrap(), interactive, &["Edit", "Read"], &[]);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (tool, input) = if write {
            (edit_probe(), json!({ "write": [abs] }))
        } else {
            (Probe { name: "Read", read_only: true }, json!({ "read": [abs] }))
        };
        let o = rt.block_on(run_check(&gate, &ws.session(), &tool, &input));
        prop_assert_eq!(verdict(&o), "deny", "{:?}", o);
    }
}

/// The executor spawns calls on tokio tasks: the gate, the hooks and their futures must be
/// Send.
#[allow(dead_code)]
fn gate_and_hook_futures_are_send(
    hooks: &Hooks,
    call: HookCall<'_>,
    s: &SessionContext,
    out: &mut ToolOutput,
) {
    fn is_send<T: Send>(_: &T) {}
    fn is_sync<T: Send + Sync>() {}
    is_sync::<PermissionGate>();
    is_sync::<Hooks>();
    let mode = PermissionMode::Default;
    is_send(&hooks.pre_tool_use(call, s, mode));
    is_send(&hooks.post_tool_use(call, s, mode, out));
    is_send(&hooks.user_prompt_submit(s, mode, "x"));
    is_send(&hooks.stop(s, mode, false));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
    /// A denied command hidden in a compound line, behind wrappers or inside `bash -c` is still
    /// denied, whatever the allow rules and the mode.
    #[test]
    fn a_denied_command_cannot_be_smuggled(
        others in proptest::collection::vec(prop::sample::select(vec!["ls", "echo hi", "npm test", "git status", "cat a.txt"]), 0..4),
        at in 0..4usize,
        seps in proptest::collection::vec(prop::sample::select(vec![" && ", " || ", "; ", " | ", "\n", " & ", " |& "]), 5),
        wrapper in prop::sample::select(vec!["", "timeout 5 ", "nice -n 3 ", "nohup ", "env A=1 ", "command ", "time ", "stdbuf -oL ", "/bin/"]),
        nest in any::<bool>(),
        allows in proptest::collection::vec(prop::sample::select(vec!["Bash", "Bash(*)", "Bash(rm *)", "Bash(ls *)", "Bash(timeout *)"]), 0..3),
        mode in prop::sample::select(vec!["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]),
    ) {
        let ws = ws();
        let mut parts: Vec<String> = others.iter().map(|s| s.to_string()).collect();
        parts.insert(at.min(parts.len()), format!("{wrapper}rm -rf x"));
        let mut line = String::new();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                line.push_str(seps[i % seps.len()]);
            }
            line.push_str(p);
        }
        if nest {
            line = format!("bash -c '{line}'");
        }
        ws.write_settings(".claude/settings.json", &json!({ "permissions": { "deny": ["Bash(rm *)"], "allow": allows } }));
        let gate = ws.gate(PermissionMode::parse(mode).unwrap(), true, &["Bash"], &[]);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let tool = Probe { name: "Bash", read_only: shell::is_read_only(&line) };
        let o = rt.block_on(run_check(&gate, &ws.session(), &tool, &json!({ "exec": [line] })));
        prop_assert_eq!(verdict(&o), "deny", "{:?}", o);
    }
}

#[tokio::test]
async fn an_edited_approval_keeps_the_grant_of_the_option_chosen() {
    let ws = ws();
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    let edited = |grant| Decision::AllowEdited {
        content: "trimmed\n".into(),
        note: "the user rejected a hunk".into(),
        grant,
        files: Vec::new(),
    };
    // Without a grant: this call only.
    let (_, e) = ask_then(&ws, &gate, "Edit", "$P/src/main.rs", edited(None)).await;
    assert!(e.allow);
    assert_eq!(e.outcome, cairn::protocol::CallOutcome::AllowedEdited);
    assert_eq!(
        verdict_of(&ws, &gate, "Edit", "$P/src/main.rs").await,
        "ask"
    );
    // With the session grant: later edits of that file run without asking.
    let (_, e) = ask_then(
        &ws,
        &gate,
        "Edit",
        "$P/src/main.rs",
        edited(Some(cairn::protocol::Grant::Session)),
    )
    .await;
    assert_eq!(e.outcome, cairn::protocol::CallOutcome::AllowedEdited);
    assert_eq!(
        verdict_of(&ws, &gate, "Edit", "$P/src/main.rs").await,
        "allow"
    );
}

/// `git status` in a repository whose own config can run a program asks; with a config that
/// only describes data it stays read-only (issue 16 §1).
#[tokio::test]
async fn git_in_a_hostile_repository_asks() {
    let ws = ws();
    let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
    let git = ws.proj.join(".git");
    let clean = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\
                 [remote \"origin\"]\n\turl = https://example.com/x.git\n\
                 [branch \"main\"]\n\tremote = origin\n";
    std::fs::write(git.join("config"), clean).unwrap();
    for cmd in ["git status", "cd src && git log --oneline -3"] {
        assert_eq!(
            verdict(&check_one(&ws, &gate, "Bash", cmd).await),
            "allow",
            "{cmd}"
        );
    }
    for hostile in [
        "[core]\n\tfsmonitor = touch pwned\n",
        "[core]\n\tpager = sh -c 'touch pwned'\n",
        "[diff]\n\texternal = ./x\n",
        "[diff \"x\"]\n\ttextconv = ./x\n",
        "[filter \"x\"]\n\tclean = ./x\n",
        "[include]\n\tpath = ../evil.cfg\n",
        "[core\n",
    ] {
        std::fs::write(git.join("config"), format!("{clean}{hostile}")).unwrap();
        for cmd in ["git status", "git log -p", "cd src && git diff"] {
            let got = check_one(&ws, &gate, "Bash", cmd).await;
            let GateOutcome::Ask(req) = &got else {
                panic!("{cmd} with {hostile:?}: {got:?}");
            };
            assert!(
                req.reason.contains("repository's git configuration"),
                "{}",
                req.reason
            );
        }
    }
    // A `.git` file pointing at a git directory elsewhere: that directory's config counts.
    let elsewhere = ws.out.join("gitdir");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("config"), "[core]\n\tfsmonitor = x\n").unwrap();
    let linked = ws.proj.join("src");
    std::fs::write(
        linked.join(".git"),
        format!("gitdir: {}\n", elsewhere.display()),
    )
    .unwrap();
    std::fs::write(git.join("config"), clean).unwrap();
    let got = check_one(&ws, &gate, "Bash", "cd src && git status").await;
    assert_eq!(verdict(&got), "ask", "{got:?}");
    assert_eq!(verdict_of(&ws, &gate, "Bash", "git status").await, "allow");
    // An allow rule still allows it: the person said so.
    let gate = ws.gate(PermissionMode::Default, true, &["Bash(git status)"], &[]);
    let got = check_one(&ws, &gate, "Bash", "cd src && git status").await;
    assert_eq!(verdict(&got), "allow", "{got:?}");
}

/// Issue 22 §4: settings `env` that changes what commands execute (`PATH=./bin:…`,
/// `BASH_ENV`, git configuration through the environment) takes away the read-only allowance
/// of every command; an allow rule still allows, and a harmless variable changes nothing.
#[tokio::test]
async fn settings_env_that_changes_execution_takes_away_the_read_only_allowance() {
    for (var, value) in [
        ("PATH", "./bin:/usr/bin:/bin"),
        ("BASH_ENV", "./evil.sh"),
        ("GIT_CONFIG_COUNT", "1"),
        ("LD_PRELOAD", "./evil.so"),
        ("PAGER", "./evil"),
    ] {
        let ws = ws();
        ws.write_settings(".claude/settings.json", &json!({ "env": { var: value } }));
        let gate = ws.gate(PermissionMode::Default, true, &[], &[]);
        for cmd in ["ls", "git status", "cat a.txt | wc -l"] {
            let got = check_one(&ws, &gate, "Bash", cmd).await;
            let GateOutcome::Ask(req) = &got else {
                panic!("{cmd} with {var}: {got:?}");
            };
            let first = cmd.split(" |").next().unwrap();
            assert_eq!(
                req.reason,
                format!(
                    "`{first}` would run with the settings' `env` setting {var}, which changes \
                     what commands run, so no command is allowed as read-only"
                )
            );
        }
        // Headless: refused, naming the rule that would allow it.
        let gate = ws.gate(PermissionMode::Default, false, &[], &[]);
        let got = check_one(&ws, &gate, "Bash", "ls").await;
        assert_eq!(verdict(&got), "deny", "{got:?}");
        // The person's rule still allows it.
        let gate = ws.gate(PermissionMode::Default, false, &["Bash(ls)"], &[]);
        assert_eq!(verdict_of(&ws, &gate, "Bash", "ls").await, "allow");
    }
    let ws = ws();
    ws.write_settings(
        ".claude/settings.json",
        &json!({ "env": { "RUST_LOG": "debug", "NODE_ENV": "test" } }),
    );
    let gate = ws.gate(PermissionMode::Default, false, &[], &[]);
    for cmd in ["ls", "git status", "cat a.txt | wc -l"] {
        assert_eq!(verdict_of(&ws, &gate, "Bash", cmd).await, "allow", "{cmd}");
    }
}

/// The git check on its own reads configuration given through the command's environment.
#[test]
fn the_git_check_reads_config_from_the_environment() {
    let ws = ws();
    std::fs::create_dir_all(ws.proj.join(".git")).unwrap();
    std::fs::write(ws.proj.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(
        ws.proj.join("global"),
        "[core]\n\tfsmonitor = touch pwned\n",
    )
    .unwrap();
    let status = &shell::analyze("git status").commands[0];
    let settings: Vec<(String, String)> = Vec::new();
    let env_of = |vars: Vec<(&str, &str)>| {
        let vars: Vec<(String, String)> = vars
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| shell::env_policy::tool_var(&vars, name)
    };
    assert!(shell::readonly::is_read_only_in(status, &ws.proj, &|n| {
        shell::env_policy::tool_var(&settings, n)
    }));
    for vars in [
        vec![
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
        ],
        vec![("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch pwned'")],
        vec![("GIT_CONFIG_GLOBAL", "global")],
        vec![("GIT_CONFIG_SYSTEM", "global")],
    ] {
        let env = env_of(vars.clone());
        assert!(
            !shell::readonly::is_read_only_in(status, &ws.proj, &env),
            "{vars:?}"
        );
    }
}

/// The fsmonitor hook really runs on `git status`: the threat the check above guards against.
#[test]
fn git_status_runs_a_repository_fsmonitor() {
    let Ok(out) = std::process::Command::new("git").arg("--version").output() else {
        return; // no git on this machine
    };
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    };
    assert!(run(&["init", "-q"]).status.success());
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let marker = dir.path().join("pwned");
    let hook = format!("touch '{}'; false", marker.display());
    assert!(run(&["config", "core.fsmonitor", &hook]).status.success());
    run(&["status"]);
    assert!(marker.exists(), "git status ran core.fsmonitor");
    assert!(!shell::readonly::is_read_only_in(
        &shell::analyze("git status").commands[0],
        dir.path(),
        &|name| std::env::var(name).ok()
    ));
}
