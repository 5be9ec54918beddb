//! `/rewind` in the core: the prompts a rewind can go back to, and going back — the files
//! (restoring the checkpoint recorded before the prompt), the conversation (the transcript's
//! copy of it as it was before the prompt), or both — and undoing the last rewind.
//!
//! Changes made outside cairn: the latest checkpoint is recorded at the end of every turn
//! (and after every rewind), so a file that differs from it was changed after cairn last
//! worked — by the person, an editor, a process of theirs. Restoring the files then asks
//! first ([`Event::RewindNeedsConfirmation`]), listing those files; nothing is touched until
//! the person confirms.

use std::collections::HashSet;

use super::core::Core;
use super::rewind_report::{describe, over_cap, writes};
use crate::checkpoint::{CheckpointId, CheckpointInfo, CheckpointOptions, RestoreAction};
use crate::protocol::{Event, RewindPoint, RewindTarget};
use crate::session::checkpoints::{mb, prompt_label};
use crate::session::resume::rebuild;
use crate::session::rewind::{RewindUndo, Segment, kept_lines, segment};
use crate::session::transcript::{Record, parse_transcript};

/// At most this many files are named in a notice or a note to the model.
const NAMED_FILES: usize = 20;

/// A prompt in one line, at most 60 characters.
fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(60).collect();
    if out.len() < line.len() || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

impl Core {
    /// The transcript's bytes and its current conversation's segment (none without one).
    fn transcript_segment(&self) -> Option<(Vec<u8>, Segment)> {
        let bytes = std::fs::read(self.conversation.transcript.path()?).ok()?;
        let seg = segment(&bytes);
        Some((bytes, seg))
    }

    /// For each prompt of `seg` (oldest first), what rewinding the files to before it cannot
    /// undo (`rewind_report.rs`), as lines for the person; and the files that prompt's turn
    /// wrote, relative to the project.
    async fn not_undone(
        &self,
        bytes: &[u8],
        seg: &Segment,
        checkpoints: &[CheckpointInfo],
    ) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
        let cap_mib = CheckpointOptions::default().max_file_size / (1024 * 1024);
        let latest = match checkpoints.last() {
            Some(c) => self.session.checkpoints.not_covered(c.id).await,
            None => Ok(Vec::new()),
        }
        .unwrap_or_default();
        let (mut outside, mut inside) = (Vec::new(), Vec::new());
        let mut out = vec![Vec::new(); seg.prompts.len()];
        let mut changed = vec![Vec::new(); seg.prompts.len()];
        let root = &self.session.project_dir;
        for (n, p) in seg.prompts.iter().enumerate().rev() {
            let end = seg.prompts.get(n + 1).map_or(seg.end, |next| next.at);
            let turn = writes(
                bytes.get(p.at..end).unwrap_or_default(),
                &self.tools.registry,
                &self.session,
            );
            // What this prompt's turn wrote, for the list's per-prompt summary.
            for path in turn.inside.iter().chain(&turn.outside) {
                let shown = path
                    .strip_prefix(root)
                    .unwrap_or(path)
                    .display()
                    .to_string();
                if !changed[n].contains(&shown) {
                    changed[n].push(shown);
                }
            }
            for (all, new) in [(&mut outside, turn.outside), (&mut inside, turn.inside)] {
                for path in new {
                    if !all.contains(&path) {
                        all.push(path);
                    }
                }
            }
            let label = prompt_label(&p.id);
            let large = match checkpoints.iter().rev().find(|c| c.label == label) {
                Some(c) => {
                    let then = self.session.checkpoints.not_covered(c.id).await;
                    over_cap(&then.unwrap_or_default(), &latest, &inside)
                }
                None => Vec::new(),
            };
            out[n] = describe(&outside, &large, cap_mib);
        }
        (out, changed)
    }

    /// `/rewind`: the prompts of the conversation, newest first, and the last rewind when it
    /// can be undone.
    pub(crate) async fn rewind_points(&mut self) {
        let checkpoints = self.session.checkpoints.list().await.unwrap_or_default();
        let labels: HashSet<String> = checkpoints.iter().map(|c| c.label.clone()).collect();
        let (bytes, seg) = self.transcript_segment().unwrap_or_default();
        let (not_undone, changed) = self.not_undone(&bytes, &seg, &checkpoints).await;
        let points = seg
            .prompts
            .into_iter()
            .zip(not_undone.into_iter().zip(changed))
            .rev()
            .map(|(p, (not_undone, changed))| RewindPoint {
                changed,
                code: labels.contains(&prompt_label(&p.id)),
                conversation: true,
                id: p.id,
                text: p.text,
                not_undone,
            })
            .collect();
        let mut notices = self.session.checkpoints.take_notices();
        if let Ok((used, budget)) = self.session.checkpoints.usage().await {
            notices.push(format!(
                "Checkpoints of the project's files take {} of their {} budget.",
                mb(used),
                mb(budget)
            ));
        }
        for message in notices {
            self.events().send(Event::Notice { message });
        }
        self.events().send(Event::RewindPoints {
            points,
            undo: self.rewind_undo.as_ref().map(|u| u.what.clone()),
        });
    }

    /// Rewind to `target` (see [`crate::protocol::Op::Rewind`]).
    pub(crate) async fn rewind(
        &mut self,
        target: RewindTarget,
        code: bool,
        conversation: bool,
        confirmed: bool,
    ) {
        let result = match &target {
            RewindTarget::Prompt { id } => {
                self.rewind_to(id, code, conversation, confirmed, &target)
                    .await
            }
            RewindTarget::UndoLast => self.undo_rewind(confirmed, &target).await,
        };
        match result {
            Ok(Some((summary, prompt))) => self.events().send(Event::Rewound { summary, prompt }),
            Ok(None) => {}
            Err(message) => self.events().send(Event::Error {
                message: format!("Cannot rewind: {message}"),
            }),
        }
    }

    /// `Ok(None)`: the person is asked to confirm first.
    async fn rewind_to(
        &mut self,
        id: &str,
        code: bool,
        conversation: bool,
        confirmed: bool,
        target: &RewindTarget,
    ) -> Result<Option<(String, Option<String>)>, String> {
        let (bytes, seg) = self
            .transcript_segment()
            .ok_or("this session has no transcript to find its prompts in")?;
        let at = seg
            .prompts
            .iter()
            .position(|p| p.id == id)
            .ok_or("that prompt is no longer in the conversation")?;
        let point = seg.prompts[at].clone();
        let checkpoint = if code {
            let label = prompt_label(id);
            let list = self.session.checkpoints.list().await?;
            let found = list.iter().rev().find(|c| c.label == label).cloned();
            Some(
                found
                    .ok_or("no checkpoint of the files was recorded before that prompt")?
                    .id,
            )
        } else {
            None
        };
        if let Some(cp) = checkpoint
            && !confirmed
            && self
                .ask_about_outside_changes(cp, target, code, conversation)
                .await?
        {
            return Ok(None);
        }
        let what = format!("rewind to \"{}\"", short(&point.text));
        let mut undo = RewindUndo {
            code: None,
            conversation: None,
            what: what.clone(),
        };
        let mut summary = Vec::new();
        if let Some(cp) = checkpoint {
            let list = self.session.checkpoints.list().await?;
            let (mut not_undone, _) = self.not_undone(&bytes, &seg, &list).await;
            let (undo_id, line) = self.restore_files(cp, &what, !conversation).await?;
            undo.code = Some(undo_id);
            summary.push(line);
            let not_undone = not_undone.swap_remove(at);
            if !not_undone.is_empty() {
                let named: Vec<&str> = not_undone
                    .iter()
                    .take(NAMED_FILES)
                    .map(String::as_str)
                    .collect();
                let more = not_undone.len().saturating_sub(NAMED_FILES);
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                summary.push(format!("Not undone: {}{more}.", named.join("; ")));
            }
        }
        if conversation {
            let kept = kept_lines(&bytes[seg.start..point.at]);
            self.replace_conversation(&kept, Some(id.to_string()));
            undo.conversation = Some((seg.start, seg.end));
            summary.push("The conversation went back to before that prompt.".to_string());
            if !code {
                self.session.remind(format!(
                    "The conversation was rewound to before the user's prompt \"{}\"; the files \
                     were not: changes made after that point are still on disk. Read files \
                     again before relying on what you remember of them.",
                    short(&point.text)
                ));
            }
        }
        self.rewind_undo = Some(undo);
        Ok(Some((
            summary.join(" "),
            conversation.then_some(point.text.clone()),
        )))
    }

    async fn undo_rewind(
        &mut self,
        confirmed: bool,
        target: &RewindTarget,
    ) -> Result<Option<(String, Option<String>)>, String> {
        let undo = self
            .rewind_undo
            .clone()
            .ok_or("there is no rewind to undo")?;
        if let Some(cp) = undo.code
            && !confirmed
            && self
                .ask_about_outside_changes(cp, target, true, undo.conversation.is_some())
                .await?
        {
            return Ok(None);
        }
        let what = format!("undo of the {}", undo.what);
        let mut redo = RewindUndo {
            code: None,
            conversation: None,
            what: what.clone(),
        };
        let mut summary = Vec::new();
        if let Some(cp) = undo.code {
            let (undo_id, line) = self.restore_files(cp, &what, false).await?;
            redo.code = Some(undo_id);
            summary.push(line);
        }
        if let Some((start, end)) = undo.conversation {
            let (bytes, seg) = self
                .transcript_segment()
                .ok_or("the transcript cannot be read")?;
            let kept = kept_lines(bytes.get(start..end).ok_or("the transcript is shorter")?);
            self.replace_conversation(&kept, None);
            redo.conversation = Some((seg.start, seg.end));
            summary.push("The conversation is back as it was.".to_string());
        }
        self.rewind_undo = Some(redo);
        Ok(Some((
            format!("Undid the {}. {}", undo.what, summary.join(" ")),
            None,
        )))
    }

    /// When restoring `cp` would undo changes made since cairn's last turn, ask the person
    /// (true) instead of restoring.
    async fn ask_about_outside_changes(
        &mut self,
        cp: CheckpointId,
        target: &RewindTarget,
        code: bool,
        conversation: bool,
    ) -> Result<bool, String> {
        let plan = self.session.checkpoints.plan(cp).await?;
        let files: Vec<_> = plan.changed_outside().map(|f| f.path.clone()).collect();
        if files.is_empty() {
            return Ok(false);
        }
        self.events().send(Event::RewindNeedsConfirmation {
            target: target.clone(),
            code,
            conversation,
            files,
        });
        Ok(true)
    }

    /// Restore checkpoint `cp`; the checkpoint that undoes it, and a line saying what changed.
    /// The files restored are forgotten by the read-file state (the model reads them again
    /// before editing); with `tell_model`, the model is told which files went back.
    async fn restore_files(
        &mut self,
        cp: CheckpointId,
        what: &str,
        tell_model: bool,
    ) -> Result<(CheckpointId, String), String> {
        let restored = self
            .session
            .checkpoints
            .restore(cp, what.to_string())
            .await?;
        for f in &restored.done {
            self.session.read_files.remove(&f.path);
        }
        // Each count names its files (relative to the project), the first few of them.
        let root = self.session.project_dir.clone();
        let count = |a: RestoreAction, verb: &str| {
            let files: Vec<String> = restored
                .done
                .iter()
                .filter(|f| f.action == a)
                .map(|f| {
                    f.path
                        .strip_prefix(&root)
                        .unwrap_or(&f.path)
                        .display()
                        .to_string()
                })
                .collect();
            let mut part = format!("{} {verb}", files.len());
            if !files.is_empty() {
                let shown: Vec<&str> = files.iter().take(NAMED_FILES).map(String::as_str).collect();
                let more = files.len().saturating_sub(NAMED_FILES);
                let more = if more > 0 {
                    format!(", +{more} more")
                } else {
                    String::new()
                };
                part.push_str(&format!(" ({}{more})", shown.join(", ")));
            }
            part
        };
        let mut line = format!(
            "Files: {}, {}, {}.",
            count(RestoreAction::Rewrite, "restored"),
            count(RestoreAction::Remove, "removed"),
            count(RestoreAction::Recreate, "recreated")
        );
        if !restored.problems.is_empty() {
            let named: Vec<String> = restored
                .problems
                .iter()
                .take(NAMED_FILES)
                .map(ToString::to_string)
                .collect();
            line.push_str(&format!(" Not restored: {}.", named.join("; ")));
        }
        if tell_model && !restored.done.is_empty() {
            let root = &self.session.project_dir;
            let named: Vec<String> = restored
                .done
                .iter()
                .take(NAMED_FILES)
                .map(|f| {
                    f.path
                        .strip_prefix(root)
                        .unwrap_or(&f.path)
                        .display()
                        .to_string()
                })
                .collect();
            self.session.remind(format!(
                "The user rewound the files ({what}); these changed back: {}{}. Read files \
                 again before relying on what you remember of them.",
                named.join(", "),
                if restored.done.len() > NAMED_FILES {
                    ", …"
                } else {
                    ""
                }
            ));
        }
        Ok((restored.undo, line))
    }

    /// The conversation becomes what the transcript lines `kept` make it; the transcript gets
    /// a rewind record and the copy, so a resume sees the same.
    fn replace_conversation(&mut self, kept: &[u8], to: Option<String>) {
        let rebuilt = rebuild(&parse_transcript(kept));
        self.conversation.transcript.record(&Record::Rewind { to });
        self.conversation.transcript.append_lines(kept);
        self.conversation.messages = rebuilt.messages;
        self.session.read_files.forget_read_results();
        self.send_history();
    }
}
