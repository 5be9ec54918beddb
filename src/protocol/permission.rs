//! The permission side of the contract: the modes the core runs in, the request it sends when
//! a tool call needs the person's say (an ordinary call, a plan to approve, questions to
//! answer), and the person's [`Decision`] that comes back. Re-exported from [`crate::protocol`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Display;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    #[default]
    Default,
    AcceptEdits,
    Plan,
    BypassPermissions,
    DontAsk,
}

impl PermissionMode {
    /// The name used in settings files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }

    pub fn parse(s: &str) -> Option<PermissionMode> {
        [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
            PermissionMode::BypassPermissions,
            PermissionMode::DontAsk,
        ]
        .into_iter()
        .find(|m| m.as_str().eq_ignore_ascii_case(s))
    }

    /// The Shift+Tab cycle: default -> acceptEdits -> plan -> (bypass if allowed) -> default.
    pub fn next_in_cycle(self, bypass_allowed: bool) -> PermissionMode {
        match self {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan if bypass_allowed => PermissionMode::BypassPermissions,
            _ => PermissionMode::Default,
        }
    }
}

/// The core asks the person whether a tool call may run. Answered by
/// [`Op::PermissionDecision`](super::Op::PermissionDecision).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    /// The one-line title of the call (`Edit src/main.rs`, `Bash npm test`).
    pub title: String,
    pub input: Value,
    /// Why it asks: the rule or mode that led here.
    pub reason: String,
    /// What would happen: a diff for writes, the command, the URL, the MCP arguments.
    pub preview: Option<Display>,
    /// What "allow for this session" covers, in words (`edits to src/main.rs`, `npm test *`).
    pub session_scope: Option<String>,
    /// The exact rule "always allow" would save, when one can be saved.
    pub saveable_rule: Option<String>,
    /// The background agent (`agent-1`, `run_in_background`) that asks, if one does: its
    /// request outlives the turn that was running when it came, so a client keeps it open when
    /// that turn ends, and drops it when that agent ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_task: Option<String>,
    pub kind: RequestKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RequestKind {
    /// An ordinary tool call.
    Tool,
    /// ExitPlanMode: the person approves the plan (choosing the next mode) or keeps planning.
    PlanApproval { plan: String },
    /// AskUserQuestion: the person answers each question ([`Decision::Answers`]) or declines.
    Questions { questions: Vec<Question> },
    /// A file changed on disk since the session read it, and the call's change cannot be
    /// merged with that outside change. The preview is a [`Display::Diff`] from the file as it
    /// is now to what the call would write: its removed lines are what overwriting loses. The
    /// person answers [`Decision::Overwrite`], [`Decision::Reread`], or anything else to abort.
    Conflict { path: std::path::PathBuf },
}

/// A question the model asks the person (Claude Code's AskUserQuestion shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Question {
    /// The question, ending with `?`.
    pub question: String,
    /// A label of at most 12 characters (`Auth method`).
    pub header: String,
    /// Two to four choices.
    pub options: Vec<QuestionOption>,
    /// Several may be chosen.
    #[serde(rename = "multiSelect", default)]
    pub multi_select: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QuestionOption {
    /// One to five words.
    pub label: String,
    /// What it means.
    pub description: String,
}

/// One file's content as the person approved it, in [`Decision::AllowEdited`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditedFile {
    pub path: std::path::PathBuf,
    pub content: String,
}

/// What an allow answer grants beyond the call itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// As [`Decision::AllowSession`].
    Session,
    /// As [`Decision::AllowAllEditsSession`].
    AllEditsSession,
    /// As [`Decision::AlwaysAllow`].
    Always,
}

/// The person's answer to a [`PermissionRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    AllowSession,
    /// Allow, and allow every file edit inside the working directories for the rest of the
    /// session (protected paths still ask).
    AllowAllEditsSession,
    /// Save the request's `saveable_rule` to the project's local settings and allow.
    AlwaysAllow,
    /// Allow, but write this content instead of the proposed one (some hunks rejected, or
    /// edited in $EDITOR). `note` tells the model what the person changed. `grant` is what the
    /// chosen option also allows from now on (none: this call only). For a change to several
    /// files ([`Display::Diffs`]) `files` holds each file's content to write instead, and
    /// `content` is unused.
    AllowEdited {
        content: String,
        note: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant: Option<Grant>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<EditedFile>,
    },
    DenyOnce,
    DenySession,
    /// Deny, and give the model this text as the tool result.
    DenyWithFeedback {
        feedback: String,
    },
    /// Approve a plan and switch to this mode.
    ApprovePlan {
        mode: PermissionMode,
    },
    /// The answers to a [`RequestKind::Questions`] request, one per question in order (several
    /// options of a multi-select question joined with `, `).
    Answers {
        answers: Vec<String>,
    },
    /// For a [`RequestKind::Conflict`]: write the call's version over the outside change,
    /// provided the file still holds exactly what was shown.
    Overwrite,
    /// For a [`RequestKind::Conflict`]: write nothing; the model gets the file as it is now and
    /// redoes its change on it.
    Reread,
}
