//! Fuzz targets for the shell classifier (issue 16 §7).
//!
//! `read_only_commands_neither_write_nor_execute`: command lines are built from a grammar of
//! programs, options from the read-only grammars and tricks (bundles, abbreviations, `-v`,
//! subscripts, substitutions), quoting, redirections, `;`/`&&`/`||`/`|`, subshells and `cd`.
//! Every line the analyser calls read-only is then run by a real bash in a scratch tree whose
//! `PATH` holds a canary under the names a substitution or option might call: the run must
//! leave the tree exactly as it was and the canary unfired. `analysis_is_total_and_stable`:
//! any string analyses without panicking, twice the same, and a read-only verdict never
//! comes with a hazard or a file write.

#[path = "support/fuzz.rs"]
mod fuzz;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cairn::shell::{analyze, is_read_only};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const PROGRAMS: &[&str] = &[
    "ls", "cat", "head", "tail", "grep", "wc", "sort", "uniq", "cut", "tr", "nl", "diff", "stat",
    "du", "find", "printf", "echo", "test", "[", "[[", "cd", "pushd", "popd", "git", "date",
    "file", "basename", "readlink", "canary", "tee", "touch", "cp", "sed", "xargs", "seq", "tac",
    "rev", "od", "column",
];

const WORDS: &[&str] = &[
    "f1",
    "dir",
    "dir/f2",
    "..",
    ".",
    "-",
    "--",
    "out",
    "-o",
    "-ro",
    "-o out",
    "--outp=out",
    "--output=out",
    "--co=canary",
    "--compress-program=canary",
    "-v",
    "a[$(canary)]",
    "-eq",
    "0",
    "1",
    "-n",
    "-r",
    "-rn",
    "-l",
    "-la",
    "-c",
    "-d",
    "-f",
    "-e",
    "x",
    "-exec",
    "canary",
    "{}",
    ";",
    "-delete",
    "-fprint",
    "-name",
    "*",
    "-O",
    "-Ocanary",
    "--open-files-in-pager=canary",
    "reflog",
    "expire",
    "delete",
    "status",
    "log",
    "grep",
    "-s",
    "%s",
    "%d",
    "+%s",
    "-T",
    "dir",
    "--rev",
    "--check",
    "]",
    "]]",
    "-k2",
    "-t,",
    "$(canary)",
    "`canary`",
    "$((1+1))",
    "${HOME}",
    "$HOME",
    "~",
    "~/x",
    "1p",
    "w out",
    "1w out",
    "s/x/y/w out",
    "s/x/y/e canary",
    "e canary",
    "1r f1",
    "-i",
    "--in-place",
    "--in",
    "-ni",
    "-ne",
    "-I{}",
    "-0",
    "echo",
    "sh -c",
];

fn word() -> impl Strategy<Value = String> {
    (prop::sample::select(WORDS), 0..4u8).prop_map(|(w, quote)| match quote {
        1 => format!("'{w}'"),
        2 => format!("\"{w}\""),
        _ => w.to_string(),
    })
}

fn simple() -> impl Strategy<Value = String> {
    (
        prop::sample::select(PROGRAMS),
        prop::collection::vec(word(), 0..4),
        prop::option::of(prop::sample::select(
            &[
                "> out",
                ">> f1",
                "2>/dev/null",
                "< f1",
                "> /dev/null",
                "2>&1",
            ][..],
        )),
    )
        .prop_map(|(p, ws, redirect)| {
            let mut s = p.to_string();
            for w in ws {
                s.push(' ');
                s.push_str(&w);
            }
            if p == "[" {
                s.push_str(" ]");
            } else if p == "[[" {
                s.push_str(" ]]");
            }
            if let Some(r) = redirect {
                s.push(' ');
                s.push_str(r);
            }
            s
        })
}

fn line() -> impl Strategy<Value = String> {
    let part =
        (simple(), any::<bool>()).prop_map(|(s, sub)| if sub { format!("({s})") } else { s });
    prop::collection::vec(
        (
            part,
            prop::sample::select(&[" ; ", " && ", " || ", " | "][..]),
        ),
        1..4,
    )
    .prop_map(|parts| {
        let n = parts.len();
        let mut s = String::new();
        for (i, (p, sep)) in parts.into_iter().enumerate() {
            s.push_str(&p);
            if i + 1 < n {
                s.push_str(sep);
            }
        }
        s
    })
}

/// A scratch tree deep enough that no `cd ..` of a generated line leaves it.
struct Scratch {
    tmp: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
    bin: PathBuf,
    marker: PathBuf,
}

fn scratch() -> Scratch {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let work = root.join("a/b/c/d/e/f/g/h/work");
    let home = root.join("home");
    let bin = root.join("bin");
    for d in [&work.join("dir"), &home, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(work.join("f1"), "b\na\n2\n10\n").unwrap();
    std::fs::write(work.join("dir/f2"), "x\n").unwrap();
    let marker = root.join("canary-fired");
    // The canary under every name a substitution, pager or `--compress-program` might call.
    let script = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
    for name in ["canary", "sh", "less", "more", "pager"] {
        let p = bin.join(name);
        std::fs::write(&p, &script).unwrap();
        let mut perms = std::fs::metadata(&p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&p, perms).unwrap();
    }
    Scratch {
        tmp,
        work,
        home,
        bin,
        marker,
    }
}

/// Every file and directory under `root` with its content (directories: empty).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                out.insert(p.clone(), Vec::new());
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

fn run_in(s: &Scratch, line: &str) {
    let path = format!("{}:/usr/bin:/bin", s.bin.display());
    let _ = Command::new("timeout")
        .args(["5", "bash", "-c", line])
        .current_dir(&s.work)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &s.home)
        .env("GIT_CEILING_DIRECTORIES", s.tmp.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("PAGER", "canary")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[test]
fn read_only_commands_neither_write_nor_execute() {
    let s = scratch();
    let ran = std::sync::atomic::AtomicUsize::new(0);
    fuzz::fuzz("shell_read_only_oracle", line(), |line| {
        if !is_read_only(&line) {
            return Ok(());
        }
        ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let before = snapshot(s.tmp.path());
        run_in(&s, &line);
        let after = snapshot(s.tmp.path());
        if s.marker.exists() {
            let _ = std::fs::remove_file(&s.marker);
            return Err(TestCaseError::fail(format!(
                "read-only `{line}` executed the canary"
            )));
        }
        if before != after {
            let changed: Vec<_> = after
                .keys()
                .chain(before.keys())
                .filter(|k| before.get(*k) != after.get(*k))
                .collect();
            return Err(TestCaseError::fail(format!(
                "read-only `{line}` changed {changed:?}"
            )));
        }
        Ok(())
    });
    // The generator must reach the interesting side: lines judged read-only, run for real.
    let ran = ran.into_inner();
    assert!(ran > 0, "no generated line was read-only");
    eprintln!("shell_read_only_oracle: {ran} read-only lines run");
}

#[test]
fn analysis_is_total_and_stable() {
    let input = prop_oneof![
        any::<String>(),
        line(),
        "[ -~\\n]{0,60}".prop_map(String::from),
    ];
    fuzz::fuzz("shell_analysis_total", input, |s| {
        let a = analyze(&s);
        prop_assert_eq!(&a, &analyze(&s));
        if is_read_only(&s) {
            prop_assert!(a.hazards.is_empty(), "{:?}", a.hazards);
            prop_assert_eq!(a.file_writes().count(), 0);
            prop_assert!(!a.commands.is_empty());
        }
        Ok(())
    });
}

/// The oracle can fail: a line that does write is caught by the snapshot, and a substitution
/// fires the canary.
#[test]
fn the_oracle_sees_writes_and_execution() {
    let s = scratch();
    let before = snapshot(s.tmp.path());
    run_in(&s, "sort -o out f1");
    assert_ne!(before, snapshot(s.tmp.path()));
    run_in(&s, "printf -v 'a[$(canary)]' x");
    assert!(s.marker.exists());
}
