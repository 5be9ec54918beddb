//! Read, Write, Edit and MultiEdit on real files in temp directories, driven through the same
//! steps the executor takes: parse (schema), validate, preview, call with the preview.

use std::path::Path;
use std::time::{Duration, SystemTime};

use cairn::protocol::{Display, Event, FileChange};
use cairn::session::watcher::attach_watcher;
use cairn::tools::edit::EditTool;
use cairn::tools::multi_edit::MultiEditTool;
use cairn::tools::read::ReadTool;
use cairn::tools::write::WriteTool;
use cairn::tools::{ContentOverride, DynTool, ToolOutput};
use serde_json::{Value, json};

#[path = "support/workspace.rs"]
mod workspace;

use workspace::Workspace;

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

type Ws = Workspace;

fn ws() -> Ws {
    Workspace::new()
}

impl Workspace {
    fn p(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }
    /// The executor's steps: parse, validate, preview, call with that preview.
    async fn run(&self, tool: &dyn DynTool, input: Value) -> Result<ToolOutput, String> {
        self.run_with(tool, input, None).await
    }
    async fn run_with(
        &self,
        tool: &dyn DynTool,
        input: Value,
        content_override: Option<ContentOverride>,
    ) -> Result<ToolOutput, String> {
        let mut ctx = self.call_ctx();
        ctx.content_override = content_override;
        workspace::run_previewed(tool, input, ctx).await
    }
    async fn read(&self, rel: &str) -> String {
        self.run(&ReadTool, json!({"file_path": self.p(rel)}))
            .await
            .unwrap()
            .content
            .into_text()
    }
}

/// Move a file's mtime so the change is visible even on filesystems with coarse timestamps.
fn bump_mtime(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(secs))
        .unwrap();
}

fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
    lines.map(|i| format!("line {i}\n")).collect()
}

// ---------- Read ----------

#[tokio::test]
async fn read_cat_n_with_range_footer() {
    let w = ws();
    w.write("a.txt", numbered(1..=10));
    let out = w.read("a.txt").await;
    assert_eq!(out.lines().next(), Some("     1\tline 1"));
    assert_eq!(out.lines().count(), 10);
    let out = w
        .run(
            &ReadTool,
            json!({"file_path": w.p("a.txt"), "offset": 3, "limit": 2}),
        )
        .await
        .unwrap();
    assert_eq!(
        out.content.text(),
        "     3\tline 3\n     4\tline 4\n\n(Showing lines 3-4 of 10. Use offset=5 to read more.)"
    );
    assert_eq!(
        out.display,
        Display::Text {
            text: "Read 2 lines".into()
        }
    );
}

#[tokio::test]
async fn read_titles_are_relative() {
    let w = ws();
    let input = ReadTool
        .parse(&json!({"file_path": w.p("src/main.rs"), "offset": 1, "limit": 200}))
        .unwrap();
    assert_eq!(
        ReadTool.title(&input, &w.session),
        "Read src/main.rs (lines 1-200)"
    );
}

#[tokio::test]
async fn read_refuses_unknown_fields_and_relative_paths_resolve() {
    let w = ws();
    let err = w
        .run(&ReadTool, json!({"file_path": "x", "bogus": 1}))
        .await
        .unwrap_err();
    assert!(err.contains("InputValidationError: Read failed"), "{err}");
    w.write("rel.txt", "hi\n");
    let out = w
        .run(&ReadTool, json!({"file_path": "rel.txt"}))
        .await
        .unwrap();
    assert_eq!(out.content.text(), "     1\thi");
}

#[tokio::test]
async fn read_empty_directory_binary_missing() {
    let w = ws();
    w.write("empty.txt", "");
    assert_eq!(
        w.read("empty.txt").await,
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    );
    std::fs::create_dir(w.path("dir")).unwrap();
    let err = w
        .run(&ReadTool, json!({"file_path": w.p("dir")}))
        .await
        .unwrap_err();
    assert!(
        err.contains("is a directory") && err.contains("Glob"),
        "{err}"
    );
    w.write("blob.dat", b"abc\0def");
    let err = w
        .run(&ReadTool, json!({"file_path": w.p("blob.dat")}))
        .await
        .unwrap_err();
    assert!(err.contains("binary"), "{err}");
    // An image name goes to the image reader, which says what is wrong with the bytes.
    w.write("pic.png", "not really a png");
    let err = w
        .run(&ReadTool, json!({"file_path": w.p("pic.png")}))
        .await
        .unwrap_err();
    assert!(err.ends_with("not a PNG, JPEG, GIF or WebP image"), "{err}");
    w.write("config.toml", "x");
    let err = w
        .run(&ReadTool, json!({"file_path": w.p("config.tml")}))
        .await
        .unwrap_err();
    assert!(err.starts_with("File does not exist."), "{err}");
    assert!(err.contains("Did you mean"), "{err}");
}

#[tokio::test]
async fn read_devices_refused_without_blocking() {
    let w = ws();
    // A sample of each way a device blocks: endless, waiting for input, a terminal.
    for dev in [
        "/dev/zero",
        "/dev/urandom",
        "/dev/stdin",
        "/dev/tty",
        "/dev/fd/0",
    ] {
        let res = tokio::time::timeout(
            Duration::from_secs(5),
            w.run(&ReadTool, json!({"file_path": dev})),
        )
        .await
        .expect("a device read must not block");
        let err = res.unwrap_err();
        assert!(err.contains("device"), "{dev}: {err}");
    }
    let out = w
        .run(&ReadTool, json!({"file_path": "/dev/null"}))
        .await
        .unwrap();
    assert!(out.content.text().contains("contents are empty"));
}

#[tokio::test]
async fn read_encodings_and_line_endings() {
    let w = ws();
    w.write("bom.txt", b"\xEF\xBB\xBFfirst\nsecond\n");
    assert_eq!(w.read("bom.txt").await, "     1\tfirst\n     2\tsecond");
    w.write("crlf.txt", b"one\r\ntwo\r\n");
    assert_eq!(w.read("crlf.txt").await, "     1\tone\n     2\ttwo");
    let mut le = vec![0xFF, 0xFE];
    for u in "héllo\r\nwörld\r\n".encode_utf16() {
        le.extend_from_slice(&u.to_le_bytes());
    }
    w.write("u16le.txt", &le);
    assert_eq!(w.read("u16le.txt").await, "     1\théllo\n     2\twörld");
    let mut be = vec![0xFE, 0xFF];
    for u in "big\nendian\n".encode_utf16() {
        be.extend_from_slice(&u.to_be_bytes());
    }
    w.write("u16be.txt", &be);
    assert_eq!(w.read("u16be.txt").await, "     1\tbig\n     2\tendian");
    w.write("bad.txt", b"ok \xFF here\n");
    let out = w.read("bad.txt").await;
    assert!(out.starts_with("     1\tok \u{FFFD} here"), "{out}");
    assert!(out.contains("not valid UTF-8"), "{out}");
}

#[tokio::test]
async fn read_long_lines_are_cut() {
    let w = ws();
    w.write("long.txt", format!("{}\n", "x".repeat(2500)));
    let out = w.read("long.txt").await;
    assert_eq!(
        out,
        format!(
            "     1\t{}… [line cut: 2500 characters in all]",
            "x".repeat(2000)
        )
    );
}

#[tokio::test]
async fn repeated_read_of_unchanged_file_is_brief() {
    let w = ws();
    w.write("a.txt", numbered(1..=3));
    let first = w.read("a.txt").await;
    assert!(first.contains("line 2"));
    let second = w.read("a.txt").await;
    assert!(
        second.starts_with("File unchanged since last read."),
        "{second}"
    );
    // A different range is served in full.
    let other = w
        .run(&ReadTool, json!({"file_path": w.p("a.txt"), "offset": 2}))
        .await
        .unwrap();
    assert!(other.content.text().starts_with("     2\tline 2"));
    // A changed file is served in full.
    w.write("a.txt", numbered(1..=4));
    bump_mtime(&w.path("a.txt"), 5);
    assert!(w.read("a.txt").await.contains("line 4"));
}

#[tokio::test]
async fn huge_sparse_file_read_at_an_offset() {
    let w = ws();
    let p = w.path("huge.log");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(numbered(1..=3000).as_bytes()).unwrap();
        // 1 GiB file: the rest is a hole (never read, since the requested range comes first).
        f.seek(SeekFrom::Start((1 << 30) - 4)).unwrap();
        f.write_all(b"end\n").unwrap();
    }
    let out = w
        .run(
            &ReadTool,
            json!({"file_path": p.display().to_string(), "offset": 2500, "limit": 3}),
        )
        .await
        .unwrap();
    assert_eq!(
        out.content.text(),
        "  2500\tline 2500\n  2501\tline 2501\n  2502\tline 2502\n\n(Showing lines 2500-2502 of a 1073741824-byte file; the total line count is not computed for files over 10 MiB. Use offset=2503 to read more.)"
    );
    let snap = w.session.read_files.get(&p).unwrap();
    assert_eq!(snap.content, None);
    assert_eq!(snap.ranges, vec![(2500, 2502)]);
}

/// Peak RSS of a Read at an offset into a 1 GiB sparse file. Run alone:
/// `cargo test --test file_tools -- --ignored --exact peak_rss_of_huge_read --nocapture`
#[tokio::test]
#[ignore]
async fn peak_rss_of_huge_read() {
    let w = ws();
    let p = w.path("huge.log");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(&p).unwrap();
        // Text lines spread over the whole GiB: 1 MiB of lines every 64 MiB, holes between.
        for i in 0..16u64 {
            f.seek(SeekFrom::Start(i << 26)).unwrap();
            let block: String = (0..20_000)
                .map(|j| format!("block {i} line {j}\n"))
                .collect();
            f.write_all(block.as_bytes()).unwrap();
        }
        f.set_len(1 << 30).unwrap();
    }
    let before = vm_hwm_kib();
    let out = w
        .run(
            &ReadTool,
            // Block k line j is line k * 20_000 + j + 1: half a GiB of holes is scanned first.
            json!({"file_path": p.display().to_string(), "offset": 8 * 20_000 + 101, "limit": 2000}),
        )
        .await
        .unwrap();
    assert!(
        out.content.text().starts_with("160101\tblock 8 line 100\n"),
        "{}",
        &out.content.text()[..200]
    );
    let after = vm_hwm_kib();
    println!("peak RSS before read: {before} KiB, after: {after} KiB");
    assert!(after < 30 * 1024, "peak RSS {after} KiB");
}

fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

// ---------- Write ----------

#[tokio::test]
async fn write_creates_parents_and_reports() {
    let w = ws();
    let out = w
        .run(
            &WriteTool::default(),
            json!({"file_path": w.p("new/dir/f.txt"), "content": "a\nb\n"}),
        )
        .await
        .unwrap();
    assert_eq!(w.file("new/dir/f.txt"), "a\nb\n");
    assert_eq!(
        out.content.text(),
        format!(
            "File created successfully at: {}\n(+2 -0)\n@@ -1,0 +1,2 @@\n+     1 a\n+     2 b",
            w.p("new/dir/f.txt")
        )
    );
    assert_eq!(
        out.display,
        Display::Diff {
            path: w.path("new/dir/f.txt"),
            before: String::new(),
            after: "a\nb\n".into()
        }
    );
}

#[tokio::test]
async fn write_existing_needs_read_and_no_outside_change() {
    let w = ws();
    w.write("f.txt", "old\n");
    let input = json!({"file_path": w.p("f.txt"), "content": "new\n"});
    assert_eq!(
        w.run(&WriteTool::default(), input.clone())
            .await
            .unwrap_err(),
        NOT_READ
    );
    w.read("f.txt").await;
    w.write("f.txt", "changed outside\n");
    bump_mtime(&w.path("f.txt"), 5);
    assert_eq!(
        w.run(&WriteTool::default(), input.clone())
            .await
            .unwrap_err(),
        MODIFIED
    );
    assert_eq!(w.file("f.txt"), "changed outside\n");
    w.read("f.txt").await;
    let out = w.run(&WriteTool::default(), input).await.unwrap();
    assert!(
        out.content.text().starts_with(&format!(
            "The file {} has been updated successfully.\n(+1 -1)",
            w.p("f.txt")
        )),
        "{}",
        out.content.text()
    );
    assert_eq!(w.file("f.txt"), "new\n");
    // Our own write counts as read: writing again needs no new Read.
    w.run(
        &WriteTool::default(),
        json!({"file_path": w.p("f.txt"), "content": "newer\n"}),
    )
    .await
    .unwrap();
    assert_eq!(w.file("f.txt"), "newer\n");
}

#[tokio::test]
async fn write_through_symlink_keeps_link() {
    let w = ws();
    w.write("real.txt", "old\n");
    std::os::unix::fs::symlink("real.txt", w.path("link.txt")).unwrap();
    w.read("link.txt").await;
    w.run(
        &WriteTool::default(),
        json!({"file_path": w.p("link.txt"), "content": "new\n"}),
    )
    .await
    .unwrap();
    assert!(
        std::fs::symlink_metadata(w.path("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(w.file("real.txt"), "new\n");
}

#[tokio::test]
async fn write_keeps_crlf_and_mode() {
    use std::os::unix::fs::PermissionsExt;
    let w = ws();
    w.write("s.sh", "a\r\nb\r\n");
    std::fs::set_permissions(w.path("s.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    w.read("s.sh").await;
    w.run(
        &WriteTool::default(),
        json!({"file_path": w.p("s.sh"), "content": "x\ny\nz\n"}),
    )
    .await
    .unwrap();
    assert_eq!(w.file("s.sh"), "x\r\ny\r\nz\r\n");
    let mode = std::fs::metadata(w.path("s.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

// ---------- Edit ----------

#[tokio::test]
async fn edit_without_read_is_refused() {
    let w = ws();
    w.write("f.rs", "fn a() {}\n");
    let err = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("f.rs"), "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap_err();
    assert_eq!(err, NOT_READ);
    assert_eq!(w.file("f.rs"), "fn a() {}\n");
}

#[tokio::test]
async fn edit_success_result_and_diff() {
    let w = ws();
    w.write("f.txt", numbered(1..=10));
    w.read("f.txt").await;
    let out = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("f.txt"), "old_string": "line 5\n", "new_string": "line five\nline 5b\n"}),
        )
        .await
        .unwrap();
    assert_eq!(
        out.content.text(),
        format!(
            "The file {} has been updated successfully.\n(+2 -1)\n@@ -2,7 +2,8 @@\n      2 line 2\n      3 line 3\n      4 line 4\n-     5 line 5\n+     5 line five\n+     6 line 5b\n      7 line 6\n      8 line 7\n      9 line 8",
            w.p("f.txt")
        )
    );
    assert_eq!(
        w.file("f.txt"),
        numbered(1..=10).replace("line 5\n", "line five\nline 5b\n")
    );
    // The edited file can be edited again without another Read.
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("f.txt"), "old_string": "line 9", "new_string": "line nine"}),
    )
    .await
    .unwrap();
    assert!(w.file("f.txt").contains("line nine\n"));
}

#[tokio::test]
async fn edit_error_texts() {
    let w = ws();
    w.write("f.txt", "let total = compute(1, 2);\nx\nx\n");
    w.read("f.txt").await;
    let edit = EditTool::default();
    let run = |old: &str, new: &str, all: bool| {
        w.run(
            &edit,
            json!({"file_path": w.p("f.txt"), "old_string": old, "new_string": new, "replace_all": all}),
        )
    };
    assert_eq!(
        run("x", "x", false).await.unwrap_err(),
        "No changes to make: old_string and new_string are exactly the same."
    );
    assert_eq!(
        run("x", "y", false).await.unwrap_err(),
        "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: x"
    );
    let err = run("let total = compute(1, 3);", "y", false)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        "String to replace not found in file.\nString: let total = compute(1, 3);\n\nThe closest match in the file is at lines 1-1:\n     1\tlet total = compute(1, 2);\nCopy old_string exactly from these lines (without the line-number prefix), or Read the file again."
    );
    assert_eq!(
        run("", "new file", false).await.unwrap_err(),
        "Cannot create new file - file already exists."
    );
    run("x", "y", true).await.unwrap();
    assert_eq!(w.file("f.txt"), "let total = compute(1, 2);\ny\ny\n");
}

#[tokio::test]
async fn edit_with_empty_old_string_creates_file() {
    let w = ws();
    let out = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("made/new.txt"), "old_string": "", "new_string": "hello\n"}),
        )
        .await
        .unwrap();
    assert!(
        out.content
            .text()
            .starts_with("File created successfully at: ")
    );
    assert_eq!(w.file("made/new.txt"), "hello\n");
    let err = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("missing.txt"), "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap_err();
    assert!(err.starts_with("File does not exist"), "{err}");
}

#[tokio::test]
async fn edit_keeps_curly_quotes_of_the_file() {
    let w = ws();
    w.write(
        "q.md",
        "He said \u{201C}hello\u{201D} and it\u{2019}s fine.\n",
    );
    w.read("q.md").await;
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("q.md"), "old_string": "said \"hello\" and it's", "new_string": "said \"goodbye\" and it's"}),
    )
    .await
    .unwrap();
    assert_eq!(
        w.file("q.md"),
        "He said \u{201C}goodbye\u{201D} and it\u{2019}s fine.\n"
    );
}

#[tokio::test]
async fn edit_strips_line_number_prefixes() {
    let w = ws();
    w.write("f.py", "def f():\n    return 1\n");
    w.read("f.py").await;
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("f.py"), "old_string": "     2\t    return 1", "new_string": "     2\t    return 2"}),
    )
    .await
    .unwrap();
    assert_eq!(w.file("f.py"), "def f():\n    return 2\n");
}

#[tokio::test]
async fn edit_round_trips_crlf_and_utf16() {
    let w = ws();
    w.write("win.txt", b"\xEF\xBB\xBFalpha\r\nbeta\r\ngamma");
    w.read("win.txt").await;
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("win.txt"), "old_string": "alpha\nbeta", "new_string": "alpha\nBETA\nextra"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(w.path("win.txt")).unwrap(),
        b"\xEF\xBB\xBFalpha\r\nBETA\r\nextra\r\ngamma"
    );

    let mut le = vec![0xFF, 0xFE];
    for u in "één\r\ntwee\r\n".encode_utf16() {
        le.extend_from_slice(&u.to_le_bytes());
    }
    w.write("u16.txt", &le);
    w.read("u16.txt").await;
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("u16.txt"), "old_string": "twee", "new_string": "drie"}),
    )
    .await
    .unwrap();
    let mut expected = vec![0xFF, 0xFE];
    for u in "één\r\ndrie\r\n".encode_utf16() {
        expected.extend_from_slice(&u.to_le_bytes());
    }
    assert_eq!(std::fs::read(w.path("u16.txt")).unwrap(), expected);
}

#[tokio::test]
async fn edit_outside_seen_lines_is_refused() {
    let w = ws();
    w.write("big.txt", numbered(1..=100));
    w.run(
        &ReadTool,
        json!({"file_path": w.p("big.txt"), "offset": 1, "limit": 10}),
    )
    .await
    .unwrap();
    let err = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("big.txt"), "old_string": "line 50\n", "new_string": "L50\n"}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        "This edit changes lines 50-50, which you have not read (lines read so far: 1-10). Read them first (offset=50, limit=1) and retry."
    );
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("big.txt"), "old_string": "line 5\n", "new_string": "L5\n"}),
    )
    .await
    .unwrap();
    w.run(
        &ReadTool,
        json!({"file_path": w.p("big.txt"), "offset": 45, "limit": 10}),
    )
    .await
    .unwrap();
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("big.txt"), "old_string": "line 50\n", "new_string": "L50\n"}),
    )
    .await
    .unwrap();
    assert!(w.file("big.txt").contains("L5\n") && w.file("big.txt").contains("L50\n"));
}

#[tokio::test]
async fn edit_after_outside_change_merges_when_apart() {
    let w = ws();
    w.write("m.txt", numbered(1..=30));
    w.read("m.txt").await;
    // The person edits line 25 in their editor.
    w.write(
        "m.txt",
        numbered(1..=30).replace("line 25\n", "line 25 (theirs)\n"),
    );
    bump_mtime(&w.path("m.txt"), 5);
    let out = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("m.txt"), "old_string": "line 3\n", "new_string": "line 3 (ours)\n"}),
        )
        .await
        .unwrap();
    assert_eq!(
        w.file("m.txt"),
        numbered(1..=30)
            .replace("line 25\n", "line 25 (theirs)\n")
            .replace("line 3\n", "line 3 (ours)\n")
    );
    assert!(
        out.content.text().ends_with(&format!(
            "Note: {} was modified outside cairn after you read it (lines 25-25 of the current file changed). Your edit did not overlap that change and was applied to the current version; content around it may differ from what you read.",
            w.p("m.txt")
        )),
        "{}",
        out.content.text()
    );
}

#[tokio::test]
async fn edit_after_overlapping_outside_change_is_refused() {
    let w = ws();
    w.write("m.txt", numbered(1..=30));
    w.read("m.txt").await;
    let theirs = numbered(1..=30).replace("line 10\n", "line 10 (theirs)\n");
    w.write("m.txt", &theirs);
    bump_mtime(&w.path("m.txt"), 5);
    let err = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("m.txt"), "old_string": "line 10\nline 11\n", "new_string": "ours\n"}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        format!(
            "{MODIFIED}\nThe outside change overlaps your edit:\n@@ -7,7 +7,7 @@\n      7 line 7\n      8 line 8\n      9 line 9\n-    10 line 10\n+    10 line 10 (theirs)\n     11 line 11\n     12 line 12\n     13 line 13"
        )
    );
    // Editing the very line next to the outside change is refused too.
    let err = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("m.txt"), "old_string": "line 11\n", "new_string": "eleven\n"}),
        )
        .await
        .unwrap_err();
    assert!(err.starts_with(MODIFIED), "{err}");
    assert_eq!(w.file("m.txt"), theirs);
}

#[tokio::test]
async fn only_mtime_change_proceeds() {
    let w = ws();
    w.write("t.txt", "same\n");
    w.read("t.txt").await;
    bump_mtime(&w.path("t.txt"), 60);
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("t.txt"), "old_string": "same", "new_string": "other"}),
    )
    .await
    .unwrap();
    assert_eq!(w.file("t.txt"), "other\n");
}

#[tokio::test]
async fn change_between_preview_and_call_is_refused() {
    let w = ws();
    w.write("p.txt", "one\ntwo\n");
    w.read("p.txt").await;
    let tool = EditTool::default();
    let mut ctx = w.call_ctx();
    let parsed = tool
        .parse(&json!({"file_path": w.p("p.txt"), "old_string": "one", "new_string": "ONE"}))
        .unwrap();
    ctx.preview = tool.preview(&parsed, &ctx).await.unwrap();
    assert_eq!(
        ctx.preview.as_ref().unwrap().new_content.as_deref(),
        Some("ONE\ntwo\n")
    );
    // Nothing written by the preview.
    assert_eq!(w.file("p.txt"), "one\ntwo\n");
    w.write("p.txt", "one\ntwo\nthree\n");
    bump_mtime(&w.path("p.txt"), 5);
    let err = tool.call(parsed, &ctx).await.unwrap_err();
    assert!(err.message.starts_with(MODIFIED), "{}", err.message);
    assert_eq!(w.file("p.txt"), "one\ntwo\nthree\n");
}

#[tokio::test]
async fn content_override_is_written_with_its_note() {
    let w = ws();
    w.write("o.txt", "a\nb\n");
    w.read("o.txt").await;
    let out = w
        .run_with(
            &EditTool::default(),
            json!({"file_path": w.p("o.txt"), "old_string": "a", "new_string": "A"}),
            Some(ContentOverride {
                content: "a\nB\n".into(),
                note: "The user changed your edit: line 2 became B instead.".into(),
                files: Vec::new(),
            }),
        )
        .await
        .unwrap();
    assert_eq!(w.file("o.txt"), "a\nB\n");
    assert!(
        out.content
            .text()
            .ends_with("The user changed your edit: line 2 became B instead."),
        "{}",
        out.content.text()
    );
}

// ---------- MultiEdit ----------

#[tokio::test]
async fn multi_edit_applies_in_order_in_one_write() {
    let w = ws();
    w.write("m.rs", "fn old() {}\nfn other() { old() }\n");
    w.read("m.rs").await;
    let out = w
        .run(
            &MultiEditTool::default(),
            json!({"file_path": w.p("m.rs"), "edits": [
                {"old_string": "old", "new_string": "new", "replace_all": true},
                {"old_string": "fn new() {}", "new_string": "fn new() { 1 }"}
            ]}),
        )
        .await
        .unwrap();
    assert_eq!(w.file("m.rs"), "fn new() { 1 }\nfn other() { new() }\n");
    assert!(
        out.content.text().contains("(+2 -2)"),
        "{}",
        out.content.text()
    );
}

#[tokio::test]
async fn multi_edit_failing_at_edit_two_leaves_file_untouched() {
    let w = ws();
    w.write("m.txt", "alpha\nbeta\n");
    w.read("m.txt").await;
    let before = std::fs::metadata(w.path("m.txt"))
        .unwrap()
        .modified()
        .unwrap();
    let err = w
        .run(
            &MultiEditTool::default(),
            json!({"file_path": w.p("m.txt"), "edits": [
                {"old_string": "alpha", "new_string": "ALPHA"},
                {"old_string": "gamma", "new_string": "GAMMA"}
            ]}),
        )
        .await
        .unwrap_err();
    assert!(
        err.starts_with(
            "Edit 2 of 2 (edits[1]) failed: String to replace not found in file.\nString: gamma"
        ),
        "{err}"
    );
    assert!(
        err.ends_with("No edit was applied; the file is unchanged."),
        "{err}"
    );
    assert_eq!(w.file("m.txt"), "alpha\nbeta\n");
    assert_eq!(
        std::fs::metadata(w.path("m.txt"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );
    let err = w
        .run(
            &MultiEditTool::default(),
            json!({"file_path": w.p("m.txt"), "edits": []}),
        )
        .await
        .unwrap_err();
    assert!(err.starts_with("edits is empty"), "{err}");
}

// ---------- Watcher ----------

async fn next_file_event(w: &mut Ws, within: Duration) -> Option<Event> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, w.events.recv()).await {
            Ok(Some(ev @ Event::FileChangedOnDisk { .. })) => return Some(ev),
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => return None,
        }
    }
}

#[tokio::test]
async fn watcher_reports_outside_write_and_steers_next_edit() {
    let mut w = ws();
    assert!(attach_watcher(&w.session));
    w.write("w.txt", numbered(1..=20));
    w.read("w.txt").await;
    // Give inotify a moment to register the directory (the watch request is asynchronous).
    tokio::time::sleep(Duration::from_millis(200)).await;
    w.write(
        "w.txt",
        numbered(1..=20).replace("line 15\n", "line 15 edited\n"),
    );
    let ev = next_file_event(&mut w, Duration::from_secs(2)).await;
    assert_eq!(
        ev,
        Some(Event::FileChangedOnDisk {
            path: w.path("w.txt"),
            change: FileChange::Modified
        })
    );
    assert_eq!(
        w.session.take_reminders(),
        vec![format!(
            "{} was modified outside cairn after you read it; Read it again before editing",
            w.p("w.txt")
        )]
    );
    assert!(w.session.read_files.get(&w.path("w.txt")).unwrap().stale);
    // The stale entry sends the edit through the merge path even if the mtime looks the same.
    let out = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("w.txt"), "old_string": "line 2\n", "new_string": "line two\n"}),
        )
        .await
        .unwrap();
    assert!(
        out.content.text().contains("was modified outside cairn"),
        "{}",
        out.content.text()
    );
    assert!(w.file("w.txt").contains("line 15 edited\n") && w.file("w.txt").contains("line two\n"));
}

/// A change made after the read but before its directory is watched raises no inotify event;
/// the watcher compares the directory's tracked files when the watch starts. (Made certain
/// here: the file is read and changed before the watcher exists; attaching it watches the
/// directories of files already read.)
#[tokio::test]
async fn a_change_before_the_watch_starts_is_still_reported() {
    let mut w = ws();
    w.write("early.txt", "one\n");
    w.read("early.txt").await;
    w.write("early.txt", "two, longer\n");
    assert!(attach_watcher(&w.session));
    let ev = next_file_event(&mut w, Duration::from_secs(5)).await;
    assert_eq!(
        ev,
        Some(Event::FileChangedOnDisk {
            path: w.path("early.txt"),
            change: FileChange::Modified
        })
    );
}

#[tokio::test]
async fn watcher_ignores_own_writes_and_reports_deletion() {
    let mut w = ws();
    assert!(attach_watcher(&w.session));
    w.write("own.txt", "a\n");
    w.read("own.txt").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    w.run(
        &EditTool::default(),
        json!({"file_path": w.p("own.txt"), "old_string": "a", "new_string": "b"}),
    )
    .await
    .unwrap();
    w.run(
        &WriteTool::default(),
        json!({"file_path": w.p("own.txt"), "content": "c\n"}),
    )
    .await
    .unwrap();
    assert_eq!(next_file_event(&mut w, Duration::from_secs(1)).await, None);
    assert!(w.session.take_reminders().is_empty());
    std::fs::remove_file(w.path("own.txt")).unwrap();
    assert_eq!(
        next_file_event(&mut w, Duration::from_secs(2)).await,
        Some(Event::FileChangedOnDisk {
            path: w.path("own.txt"),
            change: FileChange::Deleted
        })
    );
    assert!(!w.session.read_files.contains(&w.path("own.txt")));
}

#[tokio::test]
async fn invalid_utf8_file_refuses_edit_but_takes_write() {
    let w = ws();
    w.write("bad.txt", b"caf\xE9\n");
    w.read("bad.txt").await;
    let err = w
        .run(
            &EditTool::default(),
            json!({"file_path": w.p("bad.txt"), "old_string": "caf", "new_string": "tea"}),
        )
        .await
        .unwrap_err();
    assert!(err.contains("not valid text in its encoding"), "{err}");
    assert_eq!(std::fs::read(w.path("bad.txt")).unwrap(), b"caf\xE9\n");
    w.run(
        &WriteTool::default(),
        json!({"file_path": w.p("bad.txt"), "content": "café\n"}),
    )
    .await
    .unwrap();
    assert_eq!(w.file("bad.txt"), "café\n");
}

/// The error of a result, without dumping a huge Ok value when there is none.
fn expect_err(res: Result<ToolOutput, String>) -> String {
    match res {
        Err(e) => e,
        Ok(out) => panic!(
            "expected an error, got: {}",
            out.content.text().chars().take(300).collect::<String>()
        ),
    }
}

#[tokio::test]
async fn large_file_edit_after_partial_streamed_read() {
    let w = ws();
    // 11 MiB: Read streams it and keeps no content.
    let text: String = (1..=180_000)
        .map(|i| format!("{:<63}\n", format!("row {i}")))
        .collect();
    w.write("big.txt", &text);
    let read_middle = || {
        w.run(
            &ReadTool,
            json!({"file_path": w.p("big.txt"), "offset": 90_000, "limit": 20}),
        )
    };
    read_middle().await.unwrap();
    assert_eq!(
        w.session
            .read_files
            .get(&w.path("big.txt"))
            .unwrap()
            .content,
        None
    );
    let edit = EditTool::default();
    let row = |i: usize| format!("{:<63}\n", format!("row {i}"));
    // Changed outside with no merge base in memory: refused.
    let outside = text.replace(&row(7), "outside\n");
    std::fs::write(w.path("big.txt"), &outside).unwrap();
    bump_mtime(&w.path("big.txt"), 5);
    let err = expect_err(
        w.run(
            &edit,
            json!({"file_path": w.p("big.txt"), "old_string": row(90_010), "new_string": "y\n"}),
        )
        .await,
    );
    assert_eq!(err, MODIFIED);
    read_middle().await.unwrap();
    w.run(
        &edit,
        json!({"file_path": w.p("big.txt"), "old_string": row(90_005), "new_string": "changed\n"}),
    )
    .await
    .unwrap();
    assert!(w.file("big.txt") == outside.replace(&row(90_005), "changed\n"));
    let err = expect_err(
        w.run(
            &edit,
            json!({"file_path": w.p("big.txt"), "old_string": row(5), "new_string": "x\n"}),
        )
        .await,
    );
    assert!(
        err.starts_with("This edit changes lines 5-5, which you have not read"),
        "{err}"
    );
}

#[tokio::test]
async fn titles_and_accesses() {
    use cairn::tools::Access;
    let w = ws();
    let t = |tool: &dyn DynTool, input: Value| {
        let parsed = tool.parse(&input).unwrap();
        (
            tool.title(&parsed, &w.session),
            tool.accesses(&parsed, &w.session),
            tool.is_read_only(&parsed),
            tool.is_concurrency_safe(&parsed),
        )
    };
    assert_eq!(
        t(&ReadTool, json!({"file_path": "src/lib.rs"})),
        (
            "Read src/lib.rs".to_string(),
            vec![Access::Read(w.path("src/lib.rs"))],
            true,
            true
        )
    );
    assert_eq!(
        t(&ReadTool, json!({"file_path": "/etc/hosts", "offset": 10})).0,
        "Read /etc/hosts (from line 10)"
    );
    assert_eq!(
        t(
            &EditTool::default(),
            json!({"file_path": w.p("a/b.rs"), "old_string": "x", "new_string": "y"})
        ),
        (
            "Edit a/b.rs".to_string(),
            vec![Access::Write(w.path("a/b.rs"))],
            false,
            false
        )
    );
    assert_eq!(
        t(
            &MultiEditTool::default(),
            json!({"file_path": "~/notes.md", "edits": [{"old_string": "x", "new_string": "y"}, {"old_string": "p", "new_string": "q"}]})
        )
        .0,
        format!(
            "MultiEdit {}/notes.md (2 edits)",
            std::env::var("HOME").unwrap()
        )
    );
    assert_eq!(
        t(
            &WriteTool::default(),
            json!({"file_path": "out.txt", "content": ""})
        )
        .0,
        "Write out.txt"
    );
    assert_eq!(ReadTool.max_result_chars(), None);
}

#[tokio::test]
async fn watcher_reports_rename_away() {
    let mut w = ws();
    assert!(attach_watcher(&w.session));
    w.write("old.txt", "x\n");
    w.read("old.txt").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    std::fs::rename(w.path("old.txt"), w.path("new.txt")).unwrap();
    assert_eq!(
        next_file_event(&mut w, Duration::from_secs(2)).await,
        Some(Event::FileChangedOnDisk {
            path: w.path("old.txt"),
            change: FileChange::Deleted
        })
    );
    assert_eq!(
        w.session.take_reminders(),
        vec![format!(
            "{} was deleted or moved outside cairn after you read it",
            w.p("old.txt")
        )]
    );
    assert!(!w.session.read_files.contains(&w.path("old.txt")));
    assert_eq!(w.session.read_files.watched_dirs(), vec![]);
}

/// The in-place edit of a large file keeps no whole text before, but a settings file's check
/// still gets it: an edit that leaves a large `.claude/settings.json` unparsable is refused at
/// the preview, and the file is left as it was.
#[tokio::test]
async fn a_large_settings_file_edited_in_place_is_still_checked() {
    use cairn::config::settings_write::SettingsFiles;
    use cairn::session::context::{EventSender, SessionContext, SettingsWriteCheck};
    use std::sync::Arc;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let file = root.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mut text = String::from("{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"]},\n");
    for i in 0..150_000 {
        text.push_str(&format!("  \"pad{i:07}\": \"padding padding\",\n"));
    }
    text.push_str("  \"end\": 0\n}\n");
    assert!(text.len() > 4 * 1024 * 1024);
    std::fs::write(&file, &text).unwrap();
    let files = Arc::new(SettingsFiles::new(Vec::new()));
    let covers = Arc::clone(&files);
    let (events, _rx) = EventSender::channel();
    let session = Arc::new(
        SessionContext::new(
            "s".into(),
            root.clone(),
            Vec::new(),
            root.join(".data"),
            events,
        )
        .with_settings_check(Some(SettingsWriteCheck(
            Arc::new(move |p, b, a| files.check(p, b, a)),
            Arc::new(move |p| covers.covers(p)),
        ))),
    );
    let ctx = workspace::tool_context(&session, "c1");
    let path = file.display().to_string();
    workspace::run(
        &ReadTool,
        json!({"file_path": path, "offset": 75_000, "limit": 5}),
        &ctx,
    )
    .await
    .unwrap();
    let tool = EditTool::default();
    let parsed = tool
        .parse(
            &json!({"file_path": path, "old_string": "\"pad0075001\": \"padding padding\",",
                       "new_string": "\"pad0075001\": \"padding padding,"}),
        )
        .unwrap();
    let err = tool.preview(&parsed, &ctx).await.unwrap_err();
    assert!(err.message.contains("unusable"), "{}", err.message);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// A one-line edit in the middle of a large file is made on the text read, in place: the
/// preview carries the new text once and, for the person, the diff's snippet numbered as in
/// the file (not the whole before and after); the model gets the same snippet.
#[tokio::test]
async fn a_large_file_is_edited_in_place_and_shown_as_its_snippet() {
    let w = ws();
    let text: String = (0..200_000)
        .map(|i| format!("l{i:07} the quick brown fox\n"))
        .collect();
    assert!(text.len() > 4 * 1024 * 1024);
    w.write("big.txt", &text);
    w.run(
        &ReadTool,
        json!({"file_path": w.p("big.txt"), "offset": 100_000, "limit": 5}),
    )
    .await
    .unwrap();
    let tool = EditTool::default();
    let mut ctx = w.call_ctx();
    let input = json!({"file_path": w.p("big.txt"), "old_string": "l0100001 the quick",
                       "new_string": "l0100001 THE QUICK"});
    let parsed = tool.parse(&input).unwrap();
    ctx.preview = tool.preview(&parsed, &ctx).await.unwrap();
    let preview = ctx.preview.as_ref().unwrap();
    let expected = text.replacen("l0100001 the quick", "l0100001 THE QUICK", 1);
    assert_eq!(preview.new_content.as_deref(), Some(expected.as_str()));
    let Display::Text { text: shown } = &preview.display else {
        panic!("the preview is the snippet, not two whole texts");
    };
    assert!(
        shown.starts_with("(+1 -1)\n@@ -99999,7 +99999,7 @@"),
        "{shown}"
    );
    assert!(
        shown.contains("-100002 l0100001 the quick brown fox"),
        "{shown}"
    );
    assert!(
        shown.contains("+100002 l0100001 THE QUICK brown fox"),
        "{shown}"
    );
    let out = tool.call(parsed, &ctx).await.unwrap();
    assert_eq!(w.file("big.txt"), expected);
    let said = out.content.text();
    assert!(said.contains("(+1 -1)"), "{said}");
    assert!(
        said.contains("+100002 l0100001 THE QUICK brown fox"),
        "{said}"
    );
    // The read-file state follows the write: the line written edits again.
    let parsed = tool
        .parse(
            &json!({"file_path": w.p("big.txt"), "old_string": "l0100001 THE QUICK",
                       "new_string": "l0100001 the quick"}),
        )
        .unwrap();
    let mut ctx = w.call_ctx();
    ctx.preview = tool.preview(&parsed, &ctx).await.unwrap();
    tool.call(parsed, &ctx).await.unwrap();
    assert_eq!(w.file("big.txt"), text);
}

/// A large file (over 4 MiB) is edited with two copies of it in memory, not six: the preview's
/// content travels once (in its diff), the read-file state keeps no copy of what was written,
/// and the result shows the model's snippet rather than the whole before and after.
#[tokio::test]
async fn a_large_file_is_edited_without_extra_copies() {
    let w = ws();
    let mut text = "x".repeat(80) + "\n";
    text = text.repeat(60_000);
    text.push_str("needle\n");
    w.write("big.txt", &text);
    // The line to change is read; the rest needs not be (edits must lie in seen lines).
    w.run(
        &ReadTool,
        json!({"file_path": w.p("big.txt"), "offset": 60_000, "limit": 5}),
    )
    .await
    .unwrap();
    let tool = EditTool::default();
    let mut ctx = w.call_ctx();
    let parsed = tool
        .parse(&json!({"file_path": w.p("big.txt"), "old_string": "needle", "new_string": "pin"}))
        .unwrap();
    ctx.preview = tool.preview(&parsed, &ctx).await.unwrap();
    let preview = ctx.preview.as_ref().unwrap();
    assert_eq!(preview.new_content, None, "no second copy of the new text");
    assert!(preview.content().unwrap().ends_with("\npin\n"));
    let out = tool.call(parsed, &ctx).await.unwrap();
    assert!(w.file("big.txt").ends_with("x\npin\n"));
    let Display::Text { text } = &out.display else {
        panic!(
            "a whole-file diff display: {:?}",
            std::mem::discriminant(&out.display)
        );
    };
    assert!(text.contains("(+1 -1)"), "{text}");
    assert!(text.contains("pin"), "{text}");
}
