//! A tool that only runs what its inner tool may do here. Read-only agents (the built-in
//! Explore and Plan) get Bash through it ([`ReadOnlyGuard::new`]), so `git log` or `ls` work
//! and anything that could write is refused before it starts: an input the inner tool cannot
//! judge read-only (unknown command, an option not known to be harmless, a redirection) is
//! refused, with a message saying so. An agent with a memory directory gets Read, Write and
//! Edit confined to it ([`ReadOnlyGuard::inside`]): a call is refused unless every path it
//! touches is inside the directory after symlinks (and it touches nothing but paths). Both
//! fail closed; the permission gate still checks every call as usual.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::Value;

use super::{
    Access, DynTool, McpName, ParsedInput, Preview, ToolContext, ToolError, ToolHandle, ToolKind,
    ToolOutput,
};
use crate::session::context::SessionContext;

/// The tools an agent with a memory directory gets for it (Claude Code's Read, Write, Edit).
pub const MEMORY_TOOLS: &[&str] = &["Read", "Write", "Edit"];

pub struct ReadOnlyGuard {
    inner: ToolHandle,
    /// `Some(dir)`: confined to `dir` rather than read-only.
    inside: Option<PathBuf>,
}

impl ReadOnlyGuard {
    pub fn new(inner: ToolHandle) -> ReadOnlyGuard {
        ReadOnlyGuard {
            inner,
            inside: None,
        }
    }

    /// `inner`, touching nothing outside `dir`.
    pub fn inside(inner: ToolHandle, dir: PathBuf) -> ReadOnlyGuard {
        ReadOnlyGuard {
            inner,
            inside: Some(dir),
        }
    }

    /// Why `input` may not run here, if it may not.
    fn refusal(&self, input: &ParsedInput, session: &SessionContext) -> Option<String> {
        let Some(dir) = &self.inside else {
            return (!self.inner.is_read_only(input)).then(|| {
                "Only read-only commands are allowed for this agent (listing, reading, \
                 searching, read-only git), and this one is not known to be read-only. Use \
                 Read, Glob or Grep, or a simpler command."
                    .to_string()
            });
        };
        let accesses = self.inner.accesses(input, session);
        let inside = !accesses.is_empty()
            && accesses.iter().all(|a| match a {
                Access::Read(p) | Access::Write(p) => within(p, dir),
                _ => false,
            });
        (!inside).then(|| {
            format!(
                "This agent may use {} only inside its memory directory {}.",
                self.inner.name(),
                dir.display()
            )
        })
    }
}

/// Whether `path` is inside `dir` once both are resolved (the deepest existing ancestor of
/// `path` through its symlinks, the rest without `..`).
fn within(path: &Path, dir: &Path) -> bool {
    use std::path::Component;
    if path.components().any(|c| matches!(c, Component::ParentDir)) || !path.is_absolute() {
        return false;
    }
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut full = real;
            full.extend(rest.iter().rev());
            return full.starts_with(&dir);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return false,
        }
    }
}

#[async_trait]
impl DynTool for ReadOnlyGuard {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.inner.aliases()
    }
    fn description(&self) -> String {
        match &self.inside {
            None => format!(
                "{}\n\nOnly read-only commands run here (listing, reading, searching, read-only \
                 git); anything that could change a file or run a program is refused.",
                self.inner.description()
            ),
            Some(dir) => format!(
                "{}\n\nOnly for files in your memory directory {}.",
                self.inner.description(),
                dir.display()
            ),
        }
    }
    fn kind(&self) -> ToolKind {
        self.inner.kind()
    }
    fn mcp_name(&self) -> Option<McpName<'_>> {
        self.inner.mcp_name()
    }
    fn prompt(&self) -> String {
        self.inner.prompt()
    }
    fn is_deferred(&self) -> bool {
        self.inner.is_deferred()
    }
    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }
    fn max_result_chars(&self) -> Option<usize> {
        self.inner.max_result_chars()
    }
    fn parse(&self, input: &Value) -> Result<ParsedInput, ToolError> {
        self.inner.parse(input)
    }
    fn is_concurrency_safe(&self, input: &ParsedInput) -> bool {
        self.inner.is_concurrency_safe(input)
    }
    fn is_read_only(&self, input: &ParsedInput) -> bool {
        self.inner.is_read_only(input)
    }
    fn is_destructive(&self, input: &ParsedInput) -> bool {
        self.inner.is_destructive(input)
    }
    fn title(&self, input: &ParsedInput, ctx: &SessionContext) -> String {
        self.inner.title(input, ctx)
    }
    fn accesses(&self, input: &ParsedInput, ctx: &SessionContext) -> Vec<Access> {
        self.inner.accesses(input, ctx)
    }
    async fn validate(&self, input: &ParsedInput, ctx: &ToolContext) -> Result<(), ToolError> {
        if let Some(refusal) = self.refusal(input, &ctx.session) {
            return Err(ToolError::new(refusal));
        }
        self.inner.validate(input, ctx).await
    }
    async fn preview(
        &self,
        input: &ParsedInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        self.inner.preview(input, ctx).await
    }
    async fn call(&self, input: ParsedInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Judged again here: `validate` is the executor's step, and a caller that skipped it
        // must not get around the guard.
        if let Some(refusal) = self.refusal(&input, &ctx.session) {
            return Err(ToolError::new(refusal));
        }
        self.inner.call(input, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::within;

    #[test]
    fn a_path_is_within_its_directory_only_after_symlinks_and_without_dot_dot() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
        assert!(within(&dir.join("MEMORY.md"), &dir));
        assert!(within(&dir.join("new/deeper.md"), &dir));
        assert!(!within(&dir.join("link/x.md"), &dir));
        assert!(!within(&dir.join("../outside/x.md"), &dir));
        assert!(!within(&outside.join("x.md"), &dir));
        assert!(!within(std::path::Path::new("relative.md"), &dir));
    }
}
