//! Glob, Grep, Bash (+ BashOutput, KillShell) and WebFetch against real files in temp dirs,
//! real processes and a tiny HTTP server on 127.0.0.1.

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use cairn::protocol::{Display, Event};
use cairn::tools::bash::{BackgroundShells, BashOutputTool, BashTool, KillShellTool};
use cairn::tools::glob::GlobTool;
use cairn::tools::grep::GrepTool;
use cairn::tools::web_fetch::WebFetchTool;
use cairn::tools::{DynTool, ToolError, ToolOutput};
use serde_json::{Value, json};

#[path = "support/workspace.rs"]
mod workspace;

use workspace::{Workspace, run};

type Env = Workspace;

fn env() -> Env {
    Workspace::new()
}

fn set_mtime(path: &Path, secs_after_epoch: u64) {
    let f = File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs_after_epoch))
        .unwrap();
}

/// Whether a process runs (a zombie waiting for its reaper does not count).
fn running(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z ") && !stat.contains(") X "),
        Err(_) => false,
    }
}

fn git_init(dir: &Path) {
    let st = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success());
}

// ---------------------------------------------------------------- Glob

#[tokio::test]
async fn glob_orders_newest_first_and_caps_at_100() {
    let e = env();
    for i in 0..120 {
        let p = e.write(&format!("src/f{i:03}.rs"), "x");
        set_mtime(&p, 1_700_000_000 + i);
    }
    e.write("src/notes.txt", "x");
    let out = run(&GlobTool, json!({"pattern": "**/*.rs"}), &e.ctx)
        .await
        .unwrap();
    let text = out.content.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    let root = e.root();
    assert_eq!(lines[0], root.join("src/f119.rs").to_str().unwrap());
    assert_eq!(lines[99], root.join("src/f020.rs").to_str().unwrap());
    assert_eq!(
        lines[100],
        "(Results are truncated: showing the 100 most recently modified of 120 files. Use a \
         more specific path or pattern to see the others.)"
    );
    match out.display {
        Display::FileList { files, more } => {
            assert_eq!(files.len(), 100);
            assert_eq!(more, 20);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn glob_names_match_at_any_depth_and_hidden_only_on_request() {
    let e = env();
    let a = e.write("a.rs", "");
    let b = e.write("deep/er/b.rs", "");
    let h = e.write(".hidden/c.rs", "");
    set_mtime(&a, 3);
    set_mtime(&b, 2);
    let out = run(&GlobTool, json!({"pattern": "*.rs"}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(
        out.content.text(),
        format!("{}\n{}", a.display(), b.display())
    );
    let out = run(&GlobTool, json!({"pattern": ".hidden/*.rs"}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(out.content.text(), h.display().to_string());
    let out = run(
        &GlobTool,
        json!({"pattern": "*.rs", "path": "deep"}),
        &e.ctx,
    )
    .await
    .unwrap();
    assert_eq!(out.content.text(), b.display().to_string());
    // An absolute pattern carries its own root.
    let abs = format!("{}/deep/**/*.rs", e.root().display());
    let out = run(&GlobTool, json!({"pattern": abs}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(out.content.text(), b.display().to_string());
    let out = run(&GlobTool, json!({"pattern": "*.zig"}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(out.content.text(), "No files found");
    let err = run(&GlobTool, json!({"pattern": "*", "path": "nope"}), &e.ctx)
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        format!(
            "Path does not exist: {}. Check the path or use the current directory.",
            e.root().join("nope").display()
        )
    );
}

#[tokio::test]
async fn glob_respects_gitignore_outside_and_inside_git() {
    for in_git in [false, true] {
        let e = env();
        if in_git {
            git_init(e.root());
        }
        e.write(".gitignore", "target/\n*.log\n");
        let keep = e.write("src/keep.txt", "");
        e.write("target/out.txt", "");
        e.write("debug.log", "");
        let out = run(&GlobTool, json!({"pattern": "**/*"}), &e.ctx)
            .await
            .unwrap();
        assert_eq!(
            out.content.text(),
            keep.display().to_string(),
            "in_git={in_git}"
        );
    }
}

// ---------------------------------------------------------------- Grep

fn grep_tree() -> Env {
    let e = env();
    e.write("src/main.rs", "fn main() {\n    println!(\"Hello\");\n}\n");
    e.write("src/lib.rs", "pub fn hello() {}\n// HELLO world\n");
    e.write("docs/a.md", "hello docs\n");
    e.write("data.bin", b"hello\0binary\n");
    e.write(".gitignore", "ignored/\n");
    e.write("ignored/x.rs", "hello ignored\n");
    e
}

async fn grep(e: &Env, input: Value) -> ToolOutput {
    run(&GrepTool, input, &e.ctx).await.unwrap()
}

#[tokio::test]
async fn grep_files_with_matches_is_the_default_and_sorted() {
    let e = grep_tree();
    let r = e.root();
    let out = grep(&e, json!({"pattern": "hello"})).await;
    assert_eq!(
        out.content.text(),
        format!(
            "Found 2 files\n{}\n{}",
            r.join("docs/a.md").display(),
            r.join("src/lib.rs").display()
        )
    );
    let out = grep(&e, json!({"pattern": "hello", "-i": true})).await;
    assert_eq!(
        out.content.text(),
        format!(
            "Found 3 files\n{}\n{}\n{}",
            r.join("docs/a.md").display(),
            r.join("src/lib.rs").display(),
            r.join("src/main.rs").display()
        )
    );
    let out = grep(&e, json!({"pattern": "zzz"})).await;
    assert_eq!(out.content.text(), "No files found");
}

#[tokio::test]
async fn grep_content_mode_with_numbers_and_context() {
    let e = grep_tree();
    let lib = e.root().join("src/lib.rs");
    let main = e.root().join("src/main.rs");
    let out = grep(
        &e,
        json!({"pattern": "fn", "output_mode": "content", "path": "src"}),
    )
    .await;
    assert_eq!(
        out.content.text(),
        format!(
            "{}:1:pub fn hello() {{}}\n{}:1:fn main() {{",
            lib.display(),
            main.display()
        )
    );
    let out = grep(
        &e,
        json!({"pattern": "println", "output_mode": "content", "-C": 1, "path": "src"}),
    )
    .await;
    assert_eq!(
        out.content.text(),
        format!(
            "{m}-1-fn main() {{\n{m}:2:    println!(\"Hello\");\n{m}-3-}}",
            m = main.display()
        )
    );
    let out = grep(
        &e,
        json!({"pattern": "HELLO", "output_mode": "content", "-n": false, "-B": 1}),
    )
    .await;
    assert_eq!(
        out.content.text(),
        format!(
            "{l}-pub fn hello() {{}}\n{l}:// HELLO world",
            l = lib.display()
        )
    );
    match out.display {
        Display::Matches {
            pattern,
            matches,
            more,
        } => {
            assert_eq!(pattern, "HELLO");
            assert_eq!(matches.len(), 2);
            assert_eq!(matches[1].line, Some(2));
            assert_eq!(more, 0);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn grep_count_mode() {
    let e = grep_tree();
    e.write("src/many.rs", "a\na\nb\na\n");
    let out = grep(&e, json!({"pattern": "^a$", "output_mode": "count"})).await;
    assert_eq!(
        out.content.text(),
        format!(
            "{}:3\n\nFound 3 total occurrences across 1 file.",
            e.root().join("src/many.rs").display()
        )
    );
}

#[tokio::test]
async fn grep_multiline_spans_lines_only_when_asked() {
    let e = grep_tree();
    let pattern = r"main\(\) \{\n\s+println";
    let err = run(&GrepTool, json!({"pattern": pattern}), &e.ctx)
        .await
        .unwrap_err();
    assert!(
        err.message
            .ends_with("Set multiline: true to match across lines."),
        "{}",
        err.message
    );
    let out = grep(
        &e,
        json!({"pattern": r"main\(\) \{\s+println", "output_mode": "content"}),
    )
    .await;
    assert_eq!(out.content.text(), "No matches found");
    let out = grep(
        &e,
        json!({"pattern": pattern, "output_mode": "content", "multiline": true}),
    )
    .await;
    let m = e.root().join("src/main.rs");
    assert_eq!(
        out.content.text(),
        format!(
            "{m}:1:fn main() {{\n{m}:2:    println!(\"Hello\");",
            m = m.display()
        )
    );
}

#[tokio::test]
async fn grep_type_and_glob_filters() {
    let e = grep_tree();
    let r = e.root();
    let out = grep(&e, json!({"pattern": "(?i)hello", "type": "rust"})).await;
    assert_eq!(
        out.content.text(),
        format!(
            "Found 2 files\n{}\n{}",
            r.join("src/lib.rs").display(),
            r.join("src/main.rs").display()
        )
    );
    let out = grep(
        &e,
        json!({"pattern": "(?i)hello", "glob": "*.md, src/main.*"}),
    )
    .await;
    assert_eq!(
        out.content.text(),
        format!(
            "Found 2 files\n{}\n{}",
            r.join("docs/a.md").display(),
            r.join("src/main.rs").display()
        )
    );
    let out = grep(&e, json!({"pattern": "hello", "glob": "*.md"})).await;
    assert_eq!(
        out.content.text(),
        format!("Found 1 file\n{}", r.join("docs/a.md").display())
    );
    // A file as the path searches just that file, whatever the filters say.
    let out = grep(
        &e,
        json!({"pattern": "hello", "path": "docs/a.md", "type": "rust"}),
    )
    .await;
    assert_eq!(
        out.content.text(),
        format!("Found 1 file\n{}", r.join("docs/a.md").display())
    );
    let err = run(
        &GrepTool,
        json!({"pattern": "x", "type": "nosuchtype"}),
        &e.ctx,
    )
    .await
    .unwrap_err();
    assert!(
        err.message.starts_with("Unknown file type `nosuchtype`"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn grep_pages_with_head_limit_and_offset() {
    let e = env();
    let text: String = (1..=10).map(|i| format!("item {i}\n")).collect();
    let f = e.write("list.txt", text);
    let out = grep(
        &e,
        json!({"pattern": "item", "output_mode": "content", "head_limit": 3, "offset": 4}),
    )
    .await;
    let f = f.display();
    assert_eq!(
        out.content.text(),
        format!(
            "{f}:5:item 5\n{f}:6:item 6\n{f}:7:item 7\n\n(3 more results not shown; call again \
             with offset: 7 to see them, or narrow the search.)"
        )
    );
    let out = grep(&e, json!({"pattern": "item", "output_mode": "content"})).await;
    assert_eq!(out.content.text().lines().count(), 10);
}

#[tokio::test]
async fn grep_rejects_a_bad_regex_and_skips_binary_files() {
    let e = grep_tree();
    let err = run(&GrepTool, json!({"pattern": "fn ("}), &e.ctx)
        .await
        .unwrap_err();
    assert!(
        err.message.starts_with("Invalid regex `fn (`: "),
        "{}",
        err.message
    );
    let out = grep(&e, json!({"pattern": "binary"})).await;
    assert_eq!(out.content.text(), "No files found");
}

// ---------------------------------------------------------------- Bash

fn bash_tools() -> (BashTool, BashOutputTool, KillShellTool) {
    let shells = Arc::new(BackgroundShells::new());
    (
        BashTool::new(shells.clone()),
        BashOutputTool::new(shells.clone()),
        KillShellTool::new(shells),
    )
}

async fn bash(e: &Env, input: Value) -> ToolOutput {
    let (b, _, _) = bash_tools();
    run(&b, input, &e.ctx).await.unwrap()
}

#[tokio::test]
async fn bash_reports_output_stderr_and_exit_codes() {
    let e = env();
    let out = bash(&e, json!({"command": "echo out; echo err >&2"})).await;
    assert!(!out.is_error);
    assert_eq!(out.content.text(), "out\nerr");
    let out = bash(&e, json!({"command": "echo out; echo err >&2; exit 3"})).await;
    assert!(out.is_error);
    assert_eq!(out.content.text(), "Exit code 3\nout\nerr");
    match out.display {
        Display::Command {
            command,
            stdout,
            stderr,
            exit_code,
            timed_out,
        } => {
            assert_eq!(command, "echo out; echo err >&2; exit 3");
            assert_eq!((stdout.as_str(), stderr.as_str()), ("out", "err"));
            assert_eq!(exit_code, Some(3));
            assert!(!timed_out);
        }
        other => panic!("{other:?}"),
    }
    let out = bash(&e, json!({"command": "true"})).await;
    assert_eq!(out.content.text(), "(no output)");
    // The shell leads its own session (and so its own process group, with no terminal).
    let out = bash(
        &e,
        json!({"command": "test \"$(awk '{print $6}' /proc/$$/stat)\" = \"$$\" && echo leader"}),
    )
    .await;
    assert_eq!(out.content.text(), "leader");
    // The shell's own messages name the command's line, as if it ran alone.
    let out = bash(&e, json!({"command": "cairn_no_such_command_xyz"})).await;
    assert!(out.is_error);
    assert!(
        out.content.text().starts_with("Exit code 127\n"),
        "{}",
        out.content.text()
    );
    assert!(
        out.content
            .text()
            .ends_with("line 1: cairn_no_such_command_xyz: command not found"),
        "{}",
        out.content.text()
    );
    let (b, _, _) = bash_tools();
    let err = run(&b, json!({"command": "true", "timeout": 700000}), &e.ctx)
        .await
        .unwrap_err();
    assert!(
        err.message
            .starts_with("timeout 700000 ms is more than the maximum"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn bash_spills_large_output_to_a_readable_file() {
    let e = env();
    let out = bash(
        &e,
        json!({"command": "head -c 100000 /dev/zero | tr '\\0' a"}),
    )
    .await;
    assert!(out.content.text().chars().count() <= 30_000);
    assert!(out.content.text().contains(" characters truncated ...]"));
    let spill = e.ctx.session.data_dir.join("spill/call_1.txt");
    assert!(
        out.content.text().contains(&spill.display().to_string()),
        "{}",
        out.content.text()
    );
    assert_eq!(fs::read_to_string(&spill).unwrap(), "a".repeat(100_000));
}

#[tokio::test]
async fn bash_timeout_kills_a_tree_that_ignores_sigterm() {
    let e = env();
    let pidfile = e.root().join("pid");
    let cmd = format!(
        "trap '' TERM; echo started; sh -c 'trap \"\" TERM; echo $$ > {}; sleep 30'",
        pidfile.display()
    );
    let t = Instant::now();
    let out = bash(&e, json!({"command": cmd, "timeout": 1000})).await;
    let elapsed = t.elapsed();
    assert!(out.is_error);
    assert_eq!(out.content.text(), "Command timed out after 1 s\nstarted");
    // 1 s timeout + 2 s grace, with room for a slow machine.
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
    assert!(
        elapsed >= Duration::from_secs(2),
        "SIGKILL came before the grace period: {elapsed:?}"
    );
    let pid = fs::read_to_string(&pidfile).unwrap().trim().to_string();
    assert!(!running(&pid), "process {pid} survived the timeout");
}

#[tokio::test]
async fn bash_cwd_persists_inside_the_project_and_resets_outside() {
    let e = env();
    fs::create_dir(e.root().join("sub")).unwrap();
    let (b, _, _) = bash_tools();
    run(&b, json!({"command": "cd sub"}), &e.ctx).await.unwrap();
    let out = run(&b, json!({"command": "pwd"}), &e.ctx).await.unwrap();
    assert_eq!(
        out.content.text(),
        e.root().join("sub").display().to_string()
    );
    // Environment changes do not persist.
    run(&b, json!({"command": "export CAIRN_T=1"}), &e.ctx)
        .await
        .unwrap();
    let out = run(&b, json!({"command": "echo ${CAIRN_T:-unset}"}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(out.content.text(), "unset");
    let out = run(&b, json!({"command": "cd / && echo moved"}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(
        out.content.text(),
        format!(
            "moved\nShell cwd was reset to {} (the command ended in /, outside the working \
             directories)",
            e.root().display()
        )
    );
    assert_eq!(e.ctx.session.cwd(), e.root());
}

#[tokio::test]
async fn bash_interrupt_kills_at_once_and_progress_streams() {
    let mut e = env();
    let cancel = e.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(700)).await;
        cancel.cancel();
    });
    let t = Instant::now();
    let out = bash(
        &e,
        json!({"command": "for i in 1 2 3; do echo line$i; sleep 0.1; done; sleep 30"}),
    )
    .await;
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(out.is_error);
    assert_eq!(
        out.content.text(),
        "Command was interrupted by the user\nline1\nline2\nline3"
    );
    let mut progress = Vec::new();
    while let Ok(ev) = e.events.try_recv() {
        if let Event::ToolCallProgress { call_id, output } = ev {
            assert_eq!(call_id, "call_1");
            progress.push(output);
        }
    }
    assert_eq!(progress.first().map(String::as_str), Some("line1"));
    // The last lines are reported even when they came within the throttle window.
    assert_eq!(
        progress.last().map(String::as_str),
        Some("line1\nline2\nline3"),
        "{progress:?}"
    );
}

#[tokio::test]
async fn background_shells_run_report_and_die() {
    let e = env();
    let (b, out_tool, kill) = bash_tools();
    let started = run(
        &b,
        json!({"command": "echo begin; sleep 0.3; echo end; echo oops >&2", "run_in_background": true}),
        &e.ctx,
    )
    .await
    .unwrap();
    assert!(
        started
            .content
            .text()
            .starts_with("Started background shell bash_1\n"),
        "{}",
        started.content.text()
    );
    let mut all = String::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let o = run(&out_tool, json!({"bash_id": "bash_1"}), &e.ctx)
            .await
            .unwrap();
        all.push_str(&o.content.text());
        all.push('\n');
        if o.content.text().starts_with("<status>completed</status>") {
            assert!(
                o.content
                    .text()
                    .starts_with("<status>completed</status>\n<exit_code>0</exit_code>")
            );
            break;
        }
        assert!(Instant::now() < deadline, "never completed: {all}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        all.contains("<stdout>\nbegin") || all.contains("begin\nend"),
        "{all}"
    );
    assert!(all.contains("end\n</stdout>"), "{all}");
    assert!(all.contains("<stderr>\noops\n</stderr>"), "{all}");
    // Nothing new the second time.
    let o = run(&out_tool, json!({"bash_id": "bash_1"}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(
        o.content.text(),
        "<status>completed</status>\n<exit_code>0</exit_code>\n(no new output)"
    );

    run(
        &b,
        json!({"command": "sleep 30", "run_in_background": true}),
        &e.ctx,
    )
    .await
    .unwrap();
    let k = run(&kill, json!({"shell_id": "bash_2"}), &e.ctx)
        .await
        .unwrap();
    assert_eq!(
        k.content.text(),
        "Successfully killed shell: bash_2 (sleep 30)"
    );
    let o = run(&out_tool, json!({"bash_id": "bash_2"}), &e.ctx)
        .await
        .unwrap();
    assert!(
        o.content.text().starts_with("<status>killed</status>"),
        "{}",
        o.content.text()
    );
    let err = run(&kill, json!({"shell_id": "bash_2"}), &e.ctx)
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Shell bash_2 is not running, so it cannot be killed (status: killed)."
    );
    let err = run(
        &out_tool,
        json!({"bash_id": "bash_1", "filter": "("}),
        &e.ctx,
    )
    .await
    .unwrap_err();
    assert!(
        err.message.starts_with("Invalid filter regex `(`: "),
        "{}",
        err.message
    );
    let err = run(&out_tool, json!({"bash_id": "bash_9"}), &e.ctx)
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "No task found with ID: bash_9. Known tasks: bash_1, bash_2."
    );
}

#[tokio::test]
async fn background_filter_and_kill_all_on_drop() {
    let e = env();
    let pidfile = e.root().join("bgpid");
    let shells = Arc::new(BackgroundShells::new());
    let b = BashTool::new(shells.clone());
    let o = BashOutputTool::new(shells.clone());
    let cmd = format!(
        "echo keep1; echo drop; echo keep2; echo $$ > {}; sleep 30",
        pidfile.display()
    );
    run(
        &b,
        json!({"command": cmd, "run_in_background": true}),
        &e.ctx,
    )
    .await
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pidfile.exists() || fs::read_to_string(&pidfile).unwrap().trim().is_empty() {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The output may reach the buffer a moment after the pid file: read until both lines came.
    let mut kept = Vec::new();
    while kept.len() < 2 {
        let out = run(&o, json!({"bash_id": "bash_1", "filter": "^keep"}), &e.ctx)
            .await
            .unwrap();
        assert!(
            out.content.text().starts_with("<status>running</status>\n"),
            "{}",
            out.content.text()
        );
        if let Display::Command { stdout, .. } = out.display {
            kept.extend(stdout.lines().map(str::to_string));
        }
        assert!(Instant::now() < deadline, "{kept:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(kept, vec!["keep1", "keep2"]);
    let pid = fs::read_to_string(&pidfile).unwrap().trim().to_string();
    assert!(running(&pid));
    drop((b, o, shells));
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(&pid) {
        assert!(
            Instant::now() < deadline,
            "background shell {pid} survived the registry"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---------------------------------------------------------------- WebFetch

/// A tiny HTTP/1.1 server: one response per connection, hits counted per path.
async fn serve() -> (u16, Arc<Mutex<HashMap<String, usize>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let counter = hits.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let req = String::from_utf8_lossy(&req).to_string();
                let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
                *counter.lock().unwrap().entry(path.clone()).or_default() += 1;
                let (status, headers, body): (&str, String, Vec<u8>) = match path.as_str() {
                    "/page" | "/counted" => (
                        "200 OK",
                        "Content-Type: text/html; charset=utf-8\r\n".into(),
                        b"<html><head><title>Local page</title><script>var x = 1;</script>\
                          <style>body { color: red }</style></head><body><h1>Welcome</h1>\
                          <p>Rust is a <em>systems</em> language.</p><p>Other text.</p>\
                          </body></html>"
                            .to_vec(),
                    ),
                    "/moved" => (
                        "301 Moved Permanently",
                        "Location: /page\r\n".into(),
                        Vec::new(),
                    ),
                    "/away" => (
                        "302 Found",
                        format!("Location: http://localhost:{port}/page\r\n"),
                        Vec::new(),
                    ),
                    "/loop" => ("302 Found", "Location: /loop\r\n".into(), Vec::new()),
                    "/empty" => ("200 OK", "Content-Type: text/plain\r\n".into(), Vec::new()),
                    "/slow" => {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                        (
                            "200 OK",
                            "Content-Type: text/plain\r\n".into(),
                            b"late".to_vec(),
                        )
                    }
                    "/big" => (
                        "200 OK",
                        "Content-Type: text/plain\r\n".into(),
                        vec![b'z'; 11 * 1024 * 1024],
                    ),
                    "/image" => (
                        "200 OK",
                        "Content-Type: image/png\r\n".into(),
                        vec![0x89, b'P'],
                    ),
                    _ => (
                        "404 Not Found",
                        "Content-Type: text/plain\r\n".into(),
                        b"nope".to_vec(),
                    ),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (port, hits)
}

/// WebFetch `path` from the local server on `port`.
async fn fetch(
    tool: &WebFetchTool,
    e: &Env,
    port: u16,
    path: &str,
) -> Result<ToolOutput, ToolError> {
    let url = format!("http://127.0.0.1:{port}{path}");
    run(tool, json!({ "url": url }), &e.ctx).await
}

#[tokio::test]
async fn web_fetch_converts_html_and_follows_same_host_redirects() {
    let e = env();
    let (port, hits) = serve().await;
    let tool = WebFetchTool::new();
    let out = fetch(&tool, &e, port, "/page").await.unwrap();
    assert!(!out.is_error);
    assert_eq!(
        out.content.text(),
        "# Local page\n\n# Welcome\n\nRust is a *systems* language.\n\nOther text."
    );
    let out = fetch(&tool, &e, port, "/moved").await.unwrap();
    assert!(
        out.content.text().starts_with(&format!(
            "(Redirected to http://127.0.0.1:{port}/page)\n\n# Local page"
        )),
        "{}",
        out.content.text()
    );
    assert_eq!(hits.lock().unwrap().get("/moved"), Some(&1));
    let out = fetch(&tool, &e, port, "/empty").await.unwrap();
    assert_eq!(out.content.text(), "(empty response)");
    // max_length caps the result.
    let out = run(
        &tool,
        json!({"url": format!("http://127.0.0.1:{port}/page"), "max_length": 20}),
        &e.ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        out.content.text(),
        "# Local page\n\n# Welc\n\n[Cut at max_length: 20 of 67 characters.]"
    );
    let out = run(
        &tool,
        json!({"url": format!("http://127.0.0.1:{port}/page"), "prompt": "systems language"}),
        &e.ctx,
    )
    .await
    .unwrap();
    // No small model in this session: today's reading, and the result says why.
    assert!(
        out.content.text().starts_with(
            "(The page could not be summarised (no model to read it with); here it is, the \
             parts that mention the prompt first.)\n\n\
             ## Parts that mention: systems language\n\nRust is a *systems* language.\n\n## Full page"
        ),
        "{}",
        out.content.text()
    );
    let err = fetch(&tool, &e, port, "/loop").await.unwrap_err();
    assert!(
        err.message.starts_with("Too many redirects (more than 5)"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn web_fetch_reports_cross_host_redirects_and_errors() {
    let e = env();
    let (port, _) = serve().await;
    let tool = WebFetchTool::new();
    let out = fetch(&tool, &e, port, "/away").await.unwrap();
    assert!(!out.is_error);
    assert_eq!(
        out.content.text(),
        format!(
            "REDIRECT DETECTED: The URL redirects to a different host.\n\n\
             Original URL: http://127.0.0.1:{port}/away\nRedirect URL: http://localhost:{port}/page\n\
             Status: 302\n\nTo fetch the content, call WebFetch again with url: \
             \"http://localhost:{port}/page\"."
        )
    );
    let err = fetch(&tool, &e, port, "/missing").await.unwrap_err();
    assert_eq!(
        err.message,
        format!("Request failed with status 404 Not Found for http://127.0.0.1:{port}/missing")
    );
    let err = fetch(&tool, &e, port, "/image").await.unwrap_err();
    assert!(
        err.message.contains("returned binary content (image/png)"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn web_fetch_times_out_caps_size_and_caches() {
    let e = env();
    let (port, hits) = serve().await;
    let quick = WebFetchTool::with_limits(Duration::from_secs(1), 10 * 1024 * 1024);
    let t = Instant::now();
    let err = fetch(&quick, &e, port, "/slow").await.unwrap_err();
    assert_eq!(
        err.message,
        format!("Request to http://127.0.0.1:{port}/slow timed out after 1 s")
    );
    assert!(t.elapsed() < Duration::from_secs(4));

    let tool = WebFetchTool::new();
    let out = fetch(&tool, &e, port, "/big").await.unwrap();
    assert!(out.content.text().chars().count() <= 50_000);
    assert!(
        out.content
            .text()
            .contains("[The page is larger than 10 MiB; only the first part was downloaded.]")
    );
    let spilled = fs::read_to_string(e.ctx.session.data_dir.join("spill/call_1.txt")).unwrap();
    assert_eq!(
        spilled.chars().filter(|c| *c == 'z').count(),
        10 * 1024 * 1024
    );

    let url = format!("http://127.0.0.1:{port}/counted");
    let first = run(&tool, json!({"url": url}), &e.ctx).await.unwrap();
    let second = run(&tool, json!({"url": url}), &e.ctx).await.unwrap();
    assert_eq!(first.content.text(), second.content.text());
    assert_eq!(hits.lock().unwrap().get("/counted"), Some(&1));
}

#[tokio::test]
async fn tools_declare_their_safety() {
    let e = env();
    let (b, o, k) = bash_tools();
    let parse = |t: &dyn DynTool, v: Value| t.parse(&v).unwrap();
    let ls = parse(&b, json!({"command": "ls -la"}));
    let rm = parse(&b, json!({"command": "rm -rf x"}));
    assert!(b.is_read_only(&ls) && b.is_concurrency_safe(&ls));
    assert!(!b.is_read_only(&rm) && !b.is_concurrency_safe(&rm));
    assert_eq!(b.title(&rm, &e.ctx.session), "Bash rm -rf x");
    let g = parse(&GrepTool, json!({"pattern": "fn main", "path": "src"}));
    assert!(GrepTool.is_read_only(&g) && GrepTool.is_concurrency_safe(&g));
    assert_eq!(
        GrepTool.title(&g, &e.ctx.session),
        "Grep \"fn main\" in src"
    );
    let gl = parse(&GlobTool, json!({"pattern": "**/*.rs"}));
    assert_eq!(GlobTool.title(&gl, &e.ctx.session), "Glob **/*.rs");
    let w = WebFetchTool::new();
    let wi = parse(&w, json!({"url": "http://example.com"}));
    assert!(w.is_concurrency_safe(&wi) && !w.is_read_only(&wi));
    assert_eq!(
        w.accesses(&wi, &e.ctx.session),
        vec![cairn::tools::Access::Fetch("https://example.com/".into())]
    );
    let oi = parse(&o, json!({"bash_id": "bash_1"}));
    assert!(o.is_read_only(&oi));
    let ki = parse(&k, json!({"shell_id": "bash_1"}));
    assert!(!k.is_read_only(&ki));
}
