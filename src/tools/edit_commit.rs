//! Turning a plan into a write: the preview shown for approval, and the commit that writes
//! exactly what was approved.
//!
//! `preview` plans the change (see `edit_core`) and remembers, per call id, the small facts the
//! commit needs (hash of the disk bytes planned from, format, seen ranges, notes); the texts
//! themselves travel in the [`Preview`]. `commit` takes the state's write lock, and if the disk
//! still holds the very bytes the preview was planned from, writes the previewed content
//! without planning again; otherwise it plans again (merging outside changes) and refuses when
//! the result differs from what the person approved — their own version when they changed
//! it. Then it writes atomically in the file's own encoding and line endings and records the
//! write — with no await anywhere between the last disk check and the rename.
//! `ctx.content_override` replaces the content when the person edited the proposal.
//!
//! A file the client serves (`file_common::client_for`: an editor's buffer) goes through the
//! same steps with the client's text in place of the disk's: the preview plans from it, the
//! commit reads it again and compares hashes (there is no mtime), and the text is sent with
//! `write_text`. Only the critical section differs: it spans the client's round trips.
//! A write that would leave a settings file unusable or drop its deny rules is refused, at the
//! preview and again at the commit ([`SessionContext::check_settings_write`]), in every mode.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::diff_snippet::{diff_snippet, shift_ranges};
use super::edit_conflict::{self, Choice, Resolution};
use super::edit_core::{Change, MODIFIED, Plan, plan};
use super::edit_large::{LARGE_TEXT, Spliced};
use super::file_common::{
    client_error, client_for, disk_stamp, load_for_edit, load_from_client, load_text,
};
use super::write_errors::{symlink_note, write_failed};
use super::{Preview, ToolContext, ToolError, ToolOutput};
use crate::diff::changes;
use crate::files::atomic::write_atomic;
use crate::files::client::ClientFiles;
use crate::files::encoding::{self, TextFormat};
use crate::files::state::{WriteRecord, content_hash};
use crate::protocol::Display;
use crate::session::context::SessionContext;

/// The copy of `written` the read-file state keeps, unless it is large ([`LARGE_TEXT`]: an
/// outside change to it is then refused rather than merged).
fn kept(written: &str) -> Option<Arc<str>> {
    (written.len() <= LARGE_TEXT).then(|| Arc::from(written))
}

/// Previews kept waiting for their call; older ones (denied calls) are dropped.
const MAX_PREPARED: usize = 16;

/// What a commit needs from its plan besides the texts (which the preview carries).
#[derive(Debug, Clone)]
struct Prepared {
    call_id: String,
    path: PathBuf,
    disk_hash: Option<u64>,
    existed: bool,
    format: TextFormat,
    ranges_before: Vec<(usize, usize)>,
    ranges_after: Vec<(usize, usize)>,
    notes: Vec<String>,
    /// The plan edited a large text in place: the text before, as its excerpt.
    spliced: Option<Spliced>,
}

impl Prepared {
    fn of(call_id: &str, plan: &Plan) -> Prepared {
        Prepared {
            call_id: call_id.to_string(),
            path: plan.path.clone(),
            disk_hash: plan.disk_hash,
            existed: plan.existed,
            format: plan.format,
            ranges_before: plan.ranges_before.clone(),
            ranges_after: plan.ranges_after.clone(),
            notes: plan.notes.clone(),
            spliced: plan.spliced.clone(),
        }
    }
}

/// Per-tool memory of previews waiting for their call. Owned by each writing tool.
#[derive(Debug, Default)]
pub struct PreparedWrites {
    waiting: Mutex<VecDeque<Prepared>>,
}

impl PreparedWrites {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Prepared>> {
        match self.waiting.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn take(&self, call_id: &str, path: &Path) -> Option<Prepared> {
        let mut waiting = self.lock();
        let i = waiting
            .iter()
            .position(|p| p.call_id == call_id && p.path == path)?;
        waiting.remove(i)
    }

    /// Plan the change and return what the person is asked to approve. Writes nothing. A
    /// change that would break a settings file is refused here, before anyone is asked.
    pub async fn preview(
        &self,
        session: &SessionContext,
        call_id: &str,
        path: &Path,
        change: Change<'_>,
    ) -> Result<Preview, ToolError> {
        let whole_write = matches!(change, Change::Write(_));
        let loaded = load_text(path, session, whole_write).await?;
        let plan = plan(&session.read_files, path, change, loaded)?;
        let before = match &plan.spliced {
            Some(s) => Before::Spliced(s.clone()),
            None => Before::Text(Cow::Borrowed(&plan.before)),
        };
        check_settings(session, path, &before, &plan.after)?;
        drop(before);
        {
            let mut waiting = self.lock();
            waiting.retain(|p| p.call_id != call_id);
            if waiting.len() >= MAX_PREPARED {
                waiting.pop_front();
            }
            waiting.push_back(Prepared::of(call_id, &plan));
        }
        if let Some(spliced) = &plan.spliced {
            // Edited in place: the person sees the diff's snippet; the content travels once.
            let d = spliced.snippet(&plan.after);
            let text = format!("(+{} -{})\n{}", d.added, d.removed, d.snippet);
            return Ok(Preview {
                new_content: Some(plan.after),
                display: Display::Text { text },
            });
        }
        Ok(Preview {
            // A large file's content travels once, in the diff (`Preview::content`).
            new_content: (plan.after.len() <= LARGE_TEXT).then(|| plan.after.clone()),
            display: Display::Diff {
                path: plan.path,
                before: plan.before,
                after: plan.after,
            },
        })
    }

    /// Write what was approved (see the module docs) and build the result;
    /// `headline(existed)` is the first line said to the model. The text goes where it was
    /// read from: through the client when it serves the file, else to disk.
    pub async fn commit(
        &self,
        ctx: &ToolContext,
        path: &Path,
        change: Change<'_>,
        headline: impl Fn(bool) -> String,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(resolution) = &ctx.conflict {
            return resolve_conflict(ctx, path, resolution, headline);
        }
        match client_for(path, &ctx.session) {
            Some(client) => {
                self.commit_to_client(ctx, client.as_ref(), path, change, headline)
                    .await
            }
            None => self.commit_to_disk(ctx, path, change, headline),
        }
    }

    /// The disk write: no await between the last check of the disk and the rename.
    fn commit_to_disk(
        &self,
        ctx: &ToolContext,
        path: &Path,
        change: Change<'_>,
        headline: impl Fn(bool) -> String,
    ) -> Result<ToolOutput, ToolError> {
        let state = &ctx.session.read_files;
        let _guard = state.lock_writes();
        let prepared = self.take(&ctx.call_id, path);
        let whole_write = matches!(change, Change::Write(_));
        let (mut prep, before, written) = settle(
            ctx,
            path,
            prepared,
            |p| disk_holds(path, p.disk_hash),
            || plan(state, path, change, load_for_edit(path, whole_write)?),
        )?;
        write_recorded(ctx, path, &written, prep.format, &prep.ranges_after)?;
        prep.notes.extend(symlink_note(path));
        drop(_guard);
        Ok(outcome(&headline, &prep, path, &before, &written))
    }

    /// The write through the client: its text now is checked against the plan (by hash; the
    /// client's text has no mtime) and the new text sent. The client's own round trips lie
    /// between that check and the write; the client write lock keeps this session's writes
    /// from interleaving there, and the protocol offers no conditional write to close the rest.
    async fn commit_to_client(
        &self,
        ctx: &ToolContext,
        client: &dyn ClientFiles,
        path: &Path,
        change: Change<'_>,
        headline: impl Fn(bool) -> String,
    ) -> Result<ToolOutput, ToolError> {
        let state = &ctx.session.read_files;
        let _guard = state.lock_client_writes().await;
        let prepared = self.take(&ctx.call_id, path);
        let current = load_from_client(client, path).await?;
        let current_hash = current.as_ref().map(|c| c.hash);
        let (prep, before, written) = settle(
            ctx,
            path,
            prepared,
            |p| p.disk_hash == current_hash,
            || plan(state, path, change, current),
        )?;
        let bytes = encoding::encode_cow(&written, prep.format);
        // The client's text was UTF-8 (with a BOM at most), and so is its encoding again.
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            ToolError::new(format!(
                "Cannot write {} through the editor: its encoding is not UTF-8.",
                path.display()
            ))
        })?;
        client
            .write_text(path, text)
            .await
            .map_err(|e| client_error("write", path, &e))?;
        // The disk's mtime (the file may be saved later, or already): the watcher then finds
        // the same size and hash and takes the save for this write, not an outside change.
        let mtime = disk_stamp(path).map_or(SystemTime::UNIX_EPOCH, |(m, _)| m);
        state.record_write(
            path,
            WriteRecord {
                content: kept(&written),
                mtime,
                size: bytes.len() as u64,
                hash: content_hash(&bytes),
                format: prep.format,
                ranges: prep.ranges_after.clone(),
                call_id: Some(ctx.call_id.clone()),
            },
        );
        drop(_guard);
        Ok(outcome(&headline, &prep, path, &before, &written))
    }
}

/// `text` written to the disk atomically in `format` and recorded as this call's write (what
/// the watcher then takes for the session's own). The caller holds the write lock.
fn write_recorded(
    ctx: &ToolContext,
    path: &Path,
    text: &str,
    format: TextFormat,
    ranges: &[(usize, usize)],
) -> Result<(), ToolError> {
    let bytes = encoding::encode_cow(text, format);
    let stamp = write_atomic(path, &bytes)
        .map_err(|e| write_failed(path, bytes.len(), &e, &ctx.session))?;
    ctx.session.read_files.record_write(
        path,
        WriteRecord {
            content: kept(text),
            mtime: stamp.mtime,
            size: stamp.size,
            hash: content_hash(&bytes),
            format,
            ranges: ranges.to_vec(),
            call_id: Some(ctx.call_id.clone()),
        },
    );
    Ok(())
}

/// The person's answer to a conflict with an outside change (`edit_conflict`). Overwrite
/// writes the call's version, but only while the disk holds exactly the bytes shown: checked
/// under the write lock with no await before the rename. Only a file on disk is offered this
/// (a client that serves files cannot show the question), so any other is refused.
fn resolve_conflict(
    ctx: &ToolContext,
    path: &Path,
    resolution: &Resolution,
    headline: impl Fn(bool) -> String,
) -> Result<ToolOutput, ToolError> {
    let conflict = &resolution.conflict;
    if conflict.path != path || client_for(path, &ctx.session).is_some() {
        return Err(ToolError::new(MODIFIED));
    }
    if resolution.choice == Choice::Reread {
        return edit_conflict::reread(ctx, path);
    }
    let state = &ctx.session.read_files;
    let _guard = state.lock_writes();
    ctx.session
        .check_settings_write(path, &conflict.disk, &conflict.ours)
        .map_err(ToolError::new)?;
    if !disk_holds(path, Some(conflict.disk_hash)) {
        return Err(edit_conflict::changed_again(path));
    }
    write_recorded(
        ctx,
        path,
        &conflict.ours,
        conflict.format,
        &conflict.ranges_after,
    )?;
    drop(_guard);
    let mut notes = vec![edit_conflict::overwritten_note(path)];
    notes.extend(symlink_note(path));
    let prep = Prepared {
        call_id: ctx.call_id.clone(),
        path: path.to_path_buf(),
        disk_hash: Some(conflict.disk_hash),
        existed: true,
        format: conflict.format,
        ranges_before: Vec::new(),
        ranges_after: conflict.ranges_after.clone(),
        notes,
        spliced: None,
    };
    let before = Before::Text(Cow::Borrowed(&conflict.disk));
    Ok(outcome(&headline, &prep, path, &before, &conflict.ours))
}

/// What to write, as approved, and the facts to record with it. When the file still holds
/// what the preview was planned from (`unchanged`), the previewed texts are used as they are;
/// otherwise the change is planned again (`replan`, merging outside changes) and refused when
/// the result differs from what the person approved — their own version when they changed it.
/// The person's version (`content_override`) is what is written when there is one. A write
/// that would break a settings file is refused last, against the text it replaces.
fn settle<'a>(
    ctx: &'a ToolContext,
    path: &Path,
    prepared: Option<Prepared>,
    unchanged: impl FnOnce(&Prepared) -> bool,
    replan: impl FnOnce() -> Result<Plan, ToolError>,
) -> Result<(Prepared, Before<'a>, Cow<'a, str>), ToolError> {
    let approved_after = ctx.preview.as_ref().and_then(Preview::content);
    let approved_before = match ctx.preview.as_ref().map(|p| &p.display) {
        Some(Display::Diff { before, .. }) => Some(before.as_str()),
        _ => None,
    };
    let fast = match (prepared, approved_after) {
        (Some(p), Some(a)) if unchanged(&p) => match (&p.spliced, approved_before) {
            (Some(s), _) => Some((Before::Spliced(s.clone()), p, Cow::Borrowed(a))),
            (None, Some(b)) => Some((Before::Text(Cow::Borrowed(b)), p, Cow::Borrowed(a))),
            (None, None) => None,
        },
        _ => None,
    };
    let (mut before, mut prep, after) = match fast {
        Some(x) => x,
        None => {
            let plan = replan()?;
            // What the person approved: their own version when they changed it (the prompt
            // recomputes the diff when the file changes under it), else the proposal. It
            // must be exactly what planning against the file gives now.
            let approved = ctx
                .content_override
                .as_ref()
                .map(|o| o.content.as_str())
                .or(approved_after);
            if approved.is_some_and(|a| a != plan.after) {
                return Err(ToolError::new(format!(
                    "{MODIFIED} (It changed after the edit was shown for approval.)"
                )));
            }
            let prep = Prepared::of(&ctx.call_id, &plan);
            let before = match plan.spliced {
                Some(s) => Before::Spliced(s),
                None => Before::Text(Cow::Owned(plan.before)),
            };
            (before, prep, Cow::Owned(plan.after))
        }
    };
    let written = match &ctx.content_override {
        Some(o) => {
            if !o.note.trim().is_empty() {
                prep.notes.push(o.note.clone());
            }
            // The person's own text: the text before is needed whole to compare with it.
            if let Before::Spliced(s) = &before {
                before = Before::Text(Cow::Owned(s.before(&after)));
            }
            drop(after);
            let hunks = changes(before.text().unwrap_or_default(), &o.content);
            prep.ranges_after = shift_ranges(&prep.ranges_before, &hunks);
            Cow::Borrowed(o.content.as_str())
        }
        None => after,
    };
    // What is written, the person's own version included, must not break a settings file
    // whatever the mode: checked last, against the text it replaces.
    check_settings(&ctx.session, path, &before, &written)?;
    Ok((prep, before, written))
}

/// The result said to the model and shown to people: the headline, the count of lines
/// added and removed, a snippet of the change, and the plan's notes.
fn outcome(
    headline: &impl Fn(bool) -> String,
    prep: &Prepared,
    path: &Path,
    before: &Before<'_>,
    written: &str,
) -> ToolOutput {
    let d = match before {
        Before::Text(b) => diff_snippet(b, written),
        Before::Spliced(s) => s.snippet(written),
    };
    let mut text = format!("{}\n(+{} -{})", headline(prep.existed), d.added, d.removed);
    if !d.snippet.is_empty() {
        text.push('\n');
        text.push_str(&d.snippet);
    }
    for note in &prep.notes {
        text.push_str("\n\n");
        text.push_str(note);
    }
    let display = match before.text() {
        Some(before) if before.len().max(written.len()) <= LARGE_TEXT => Display::Diff {
            path: path.to_path_buf(),
            before: before.to_string(),
            after: written.to_string(),
        },
        _ => Display::Text { text: text.clone() },
    };
    ToolOutput::with_display(text, display)
}

/// The text a write replaces: whole, or the excerpt of a large text edited in place.
enum Before<'a> {
    Text(Cow<'a, str>),
    Spliced(Spliced),
}

impl Before<'_> {
    /// The whole text, when it is kept whole.
    fn text(&self) -> Option<&str> {
        match self {
            Before::Text(t) => Some(t),
            Before::Spliced(_) => None,
        }
    }
}

/// [`SessionContext::check_settings_write`] of writing `after` over `before`: a text edited in
/// place is rebuilt whole for it only when `path` is a settings file.
fn check_settings(
    session: &SessionContext,
    path: &Path,
    before: &Before<'_>,
    after: &str,
) -> Result<(), ToolError> {
    let whole;
    let before = match before {
        Before::Text(t) => t.as_ref(),
        Before::Spliced(_) if !session.is_settings_file(path) => return Ok(()),
        Before::Spliced(s) => {
            whole = s.before(after);
            whole.as_str()
        }
    };
    session
        .check_settings_write(path, before, after)
        .map_err(ToolError::new)
}

/// The disk still holds the bytes hashed at planning time (`None`: still no file there).
fn disk_holds(path: &Path, hash: Option<u64>) -> bool {
    match hash {
        None => {
            matches!(std::fs::metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        }
        Some(h) => hash_file(path).is_some_and(|got| got == h),
    }
}

/// [`content_hash`] of a file, read whole when small and in large blocks otherwise so a big
/// file costs no big allocation. The hash is defined over the whole byte string, so the
/// blocks are joined through a small carry buffer.
fn hash_file(path: &Path) -> Option<u64> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() <= 1024 * 1024 {
        return std::fs::read(path).ok().map(|b| content_hash(&b));
    }
    let mut hasher = crate::files::state::ContentHasher::new(meta.len());
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 1024 * 1024];
    loop {
        let n = std::io::Read::read(&mut file, &mut buf).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    hasher.finish_checked()
}
