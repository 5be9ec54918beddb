//! One MCP server's log file ([`ServerLog`]): the lines it writes to stderr and what happened to
//! its connection (starting, connected, failed and why, exited, reconnecting, disabled), each
//! with the time, appended to `<dir>/<server>.log` — for a person reading why a server failed
//! after `/mcp`'s last lines have scrolled away (Claude Code keeps the like under
//! `~/.cache/claude-cli-nodejs/<project>/mcp-logs-<server>/`).
//!
//! Bounded: past [`MAX_BYTES`] the file becomes `<server>.log.1` (replacing the one before)
//! and a new one starts, so a chatty server keeps at most twice that. The name comes from
//! untrusted configuration and is made a safe file name ([`file_name`]). Writing never fails
//! the server: a log that cannot be written is said once in cairn's own log and given up.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The size at which the file is rotated.
pub const MAX_BYTES: u64 = 512 * 1024;

/// The longest file name stem a server name becomes.
const MAX_STEM: usize = 64;

/// A server's log file, opened on the first line.
#[derive(Debug)]
pub struct ServerLog {
    path: PathBuf,
    /// The open file and its size; `Err(())` once writing failed (given up).
    file: Mutex<Result<Option<(File, u64)>, ()>>,
}

/// `name` as a file name: ASCII letters, digits, `-` and `_` kept, anything else `_`, at most
/// [`MAX_STEM`] characters, never empty and never starting with a dot.
pub fn file_name(name: &str) -> String {
    let stem: String = name
        .chars()
        .take(MAX_STEM)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = if stem.is_empty() { "_".into() } else { stem };
    format!("{stem}.log")
}

impl ServerLog {
    /// The log of the server `name`, in `dir` (created when the first line is written).
    pub fn new(dir: &Path, name: &str) -> ServerLog {
        ServerLog {
            path: dir.join(file_name(name)),
            file: Mutex::new(Ok(None)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A line the server wrote to stderr.
    pub fn stderr(&self, line: &str) {
        self.write("stderr", line);
    }

    /// Something that happened to the connection (`starting`, `failed: …`).
    pub fn event(&self, what: &str) {
        self.write("cairn", what);
    }

    fn write(&self, who: &str, text: &str) {
        let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
        // One line per entry, whatever the text holds.
        let text: String = text
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        let line = format!("{now} [{who}] {text}\n");
        let mut slot = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(state) = &mut *slot else { return };
        if let Err(e) = self.append(state, line.as_bytes()) {
            tracing::warn!(target: "cairn::mcp", path = %self.path.display(),
                "cannot write the server's log (no more is written to it): {e}");
            *slot = Err(());
        }
    }

    fn append(&self, state: &mut Option<(File, u64)>, bytes: &[u8]) -> std::io::Result<()> {
        let full = state
            .as_ref()
            .is_some_and(|(_, size)| size + bytes.len() as u64 > MAX_BYTES);
        if full {
            *state = None;
            let mut old = self.path.clone().into_os_string();
            old.push(".1");
            std::fs::rename(&self.path, old)?;
        }
        if state.is_none() {
            *state = Some(self.open()?);
        }
        if let Some((file, size)) = state {
            file.write_all(bytes)?;
            *size += bytes.len() as u64;
        }
        Ok(())
    }

    fn open(&self) -> std::io::Result<(File, u64)> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // Its stderr may say more than the person would show others.
            options.mode(0o600);
        }
        let file = options.open(&self.path)?;
        let size = file.metadata()?.len();
        Ok((file, size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_safe_file_names() {
        assert_eq!(file_name("db"), "db.log");
        assert_eq!(file_name("../../etc/passwd"), "______etc_passwd.log");
        assert_eq!(file_name(".hidden"), "_hidden.log");
        assert_eq!(file_name(""), "_.log");
        assert_eq!(file_name("a\u{0}b/ü"), "a_b__.log");
        assert_eq!(file_name(&"x".repeat(500)).len(), MAX_STEM + 4);
    }

    #[test]
    fn lines_are_appended_and_the_file_is_rotated_past_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let log = ServerLog::new(&dir.path().join("mcp-logs"), "s/x");
        log.event("starting");
        log.stderr("line one\nwith a break");
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].ends_with("Z [cairn] starting"), "{text}");
        assert!(
            lines[1].ends_with(" [stderr] line one with a break"),
            "{text}"
        );
        assert_eq!(log.path(), dir.path().join("mcp-logs/s_x.log"));
        let long = "y".repeat(1000);
        for _ in 0..(MAX_BYTES / 1000 + 10) {
            log.stderr(&long);
        }
        let size = std::fs::metadata(log.path()).unwrap().len();
        assert!(
            size < MAX_BYTES / 4,
            "a new file after the rotation: {size}"
        );
        let old = std::fs::read_to_string(dir.path().join("mcp-logs/s_x.log.1")).unwrap();
        assert!(old.len() as u64 <= MAX_BYTES);
        assert!(old.contains("[cairn] starting"));
    }
}
