//! The decision for one call: [`PermissionGate::check`] and its steps.
//!
//! First the call is turned into facts (every path with its symlink chain, every simple
//! command of a command line, hosts, names), then the steps run in the order the module
//! docs of [`super`] give. Deny-side checks treat a path as matched when any candidate
//! (as given, a hop, resolved) matches; allow-side checks need every candidate to match.

use std::path::PathBuf;
use std::sync::Arc;

use super::ask::{Gap, PathWhy, gap_reason, gap_rule, headless_message};
use super::commands::CommandItem;
use super::roots::ConversationRoots;
use super::safety::{PathFacts, normalize_lexically, path_facts, shell_path, shell_path_facts};
use super::{CallInfo, GateOutcome, Pending, PermissionGate, lock, plan, question};
use crate::hooks::PreToolAnswer;
use crate::protocol::{PermissionMode, PermissionRequest, RequestKind};
use crate::rules::{Rule, Specifier, Target};
use crate::shell::{Dirs, analyze};
use crate::tools::{Access, McpName, ToolKind};

/// What acceptEdits lets Bash do inside the working directories.
const ACCEPT_EDITS_COMMANDS: &[&str] = &["mkdir", "touch", "mv", "cp"];

struct PathItem {
    path: PathBuf,
    write: bool,
    facts: PathFacts,
}

/// A call's facts found before the PreToolUse hooks answered ([`PermissionGate::analyse`]),
/// for [`PermissionGate::check_analysed`].
pub struct Analysed<'a> {
    call_id: String,
    /// A path that cannot be judged refuses the call with this message.
    facts: Result<Facts<'a>, String>,
}

/// Everything rules are matched against, for one call.
struct Facts<'a> {
    tool: &'a str,
    /// The conversation making the call (whose turn grants apply).
    conversation: &'a str,
    kind: ToolKind,
    /// For an MCP tool, the (server, tool) pair rules match on.
    mcp: Option<McpName<'a>>,
    read_only: bool,
    /// The plan the call asks the person to approve (it leaves plan mode).
    plan: Option<String>,
    /// Questions the call asks the person.
    questions: Option<Vec<crate::protocol::Question>>,
    paths: Vec<PathItem>,
    commands: Vec<CommandItem>,
    /// Whole command lines (deny rules also see them unsplit).
    lines: Vec<String>,
    hazards: Vec<String>,
    hosts: Vec<String>,
    names: Vec<String>,
    /// Names of what the call would run on the person's say-so (a skill).
    invoked: Vec<String>,
    /// MCP servers whose resources the call reads.
    mcp_servers: Vec<String>,
    /// Where the conversation works (the session's roots, or its own worktree).
    roots: Arc<ConversationRoots>,
}

impl PermissionGate {
    /// The decision on one call, given the PreToolUse hooks' answer about it (the default
    /// answer when no hook ran). A hook's rewritten input has been put in `call` already.
    pub fn check(&self, call: &CallInfo<'_>, hook: &PreToolAnswer) -> GateOutcome {
        self.check_analysed(call, self.analyse(call), hook)
    }

    /// The hook-independent half of [`Self::check`]: whether the call is read-only and its
    /// facts (every path with its symlink chain, the shell analysis of every command line).
    /// The executor computes it while the PreToolUse hooks run (the notes' stage 3), then
    /// hands it to [`Self::check_analysed`] with their answer. Runs no hooks; no effects.
    pub fn analyse<'a>(&self, call: &CallInfo<'a>) -> Analysed<'a> {
        let read_only = call.tool.is_read_only(call.input);
        Analysed {
            call_id: call.call_id.to_string(),
            facts: self.facts(call, read_only),
        }
    }

    /// [`Self::check`] with the facts already found by [`Self::analyse`] for this same call
    /// (the same input and accesses). Facts of another call are not trusted: they are found
    /// again.
    pub fn check_analysed(
        &self,
        call: &CallInfo<'_>,
        analysed: Analysed<'_>,
        hook: &PreToolAnswer,
    ) -> GateOutcome {
        let analysed = if analysed.call_id == call.call_id {
            analysed
        } else {
            self.analyse(call)
        };
        self.decide(call, analysed, hook)
    }

    /// The decision on the call's paths, commands and names alone, before the tool does any
    /// I/O of its own (validation, preview): `Some(message)` when the call is refused whatever
    /// the file holds or whether it exists, so a refusal never depends on (and never reveals)
    /// the file. Only resolving the paths' symlinks touches the disk, as the full check does.
    ///
    /// Refusals a PreToolUse hook could still lift (a hook's allow over a missing rule) are
    /// left to [`Self::check`] when such hooks are configured. Runs no hooks; has no effects.
    pub fn check_before_io(&self, call: &CallInfo<'_>) -> Option<String> {
        let analysed = self.analyse(call);
        let facts = match &analysed.facts {
            Ok(f) => f,
            Err(message) => return Some(message.clone()),
        };
        if let Some(message) = self.firm_denial(facts, self.mode_for(call.conversation)) {
            return Some(message);
        }
        if self.pre_tool_hooks {
            return None;
        }
        match self.decide(call, analysed, &PreToolAnswer::default()) {
            GateOutcome::Deny { message } => Some(message),
            _ => {
                // `decide` remembered the scope of a question it would ask; the real check
                // asks again after the preview.
                self.withdraw(call.call_id);
                None
            }
        }
    }

    /// Forget an open question for `call_id` that will never be put to the person (the call
    /// failed before it was asked).
    pub fn withdraw(&self, call_id: &str) {
        lock(&self.pending).remove(call_id);
    }

    fn decide(
        &self,
        call: &CallInfo<'_>,
        analysed: Analysed<'_>,
        hook: &PreToolAnswer,
    ) -> GateOutcome {
        let tool = call.tool.name();
        let facts = match analysed.facts {
            Ok(f) => f,
            Err(message) => return GateOutcome::Deny { message },
        };
        let read_only = facts.read_only;
        let mode = self.mode_for(call.conversation);
        if let Some(message) = self.firm_denial(&facts, mode) {
            return GateOutcome::Deny { message };
        }
        if !read_only && !self.settings_broken.is_empty() {
            return GateOutcome::Deny {
                message: broken_settings_message(tool, &self.settings_broken),
            };
        }
        if let Some(text) = &facts.plan {
            return plan::request(call, text, mode, self.interactive);
        }
        if let Some(reason) = &hook.deny {
            return GateOutcome::Deny {
                message: format!("A PreToolUse hook denied this call: {reason}"),
            };
        }
        if let Some(questions) = &facts.questions {
            return question::request(call, questions, self.interactive);
        }
        let ask_rule = self.ask.iter().find(|r| blocks(&r.rule, &facts));
        if let Some(r) = ask_rule.filter(|_| mode != PermissionMode::BypassPermissions) {
            let reason = format!("the rule `{}` ({}) asks before this", r.rule.text, r.origin);
            return self.ask_or_refuse(call, &facts, Vec::new(), reason, mode);
        }
        if let Some(reason) = &hook.ask {
            return self.ask_or_refuse(call, &facts, Vec::new(), reason.clone(), mode);
        }
        if hook.allow || mode == PermissionMode::BypassPermissions {
            return GateOutcome::Allow;
        }
        let gaps = self.gaps(&facts, mode);
        if gaps.is_empty() {
            return GateOutcome::Allow;
        }
        let reason = gap_reason(&gaps[0], tool, &facts.roots.root);
        self.ask_or_refuse(call, &facts, gaps, reason, mode)
    }

    /// The refusals no hook can lift (session denials, deny rules, plan mode), in the order
    /// [`Self::decide`] applies them.
    fn firm_denial(&self, facts: &Facts<'_>, mode: PermissionMode) -> Option<String> {
        let tool = facts.tool;
        // Session denials and deny rules: nothing below can undo them.
        if let Some(rule) = lock(&self.session_deny).iter().find(|r| blocks(r, facts)) {
            return Some(format!(
                "The user denied this for the rest of the session (`{}`). Do not retry it; \
                 find another way or ask the user how to proceed.",
                rule.text
            ));
        }
        if let Some(r) = self.deny.iter().find(|r| blocks(&r.rule, facts)) {
            return Some(format!(
                "Permission to use {tool} has been denied by the rule `{}` ({}).",
                r.rule.text, r.origin
            ));
        }
        // Asking to approve the plan is how plan mode ends; `decide` answers it before this.
        if facts.plan.is_none() && mode == PermissionMode::Plan && !facts.read_only {
            return Some(format!(
                "{tool} is not available in plan mode: only read-only tools may run until \
                 the user approves the plan. Finish researching, then call ExitPlanMode \
                 with your plan."
            ));
        }
        None
    }

    fn facts<'a>(&self, call: &CallInfo<'a>, read_only: bool) -> Result<Facts<'a>, String> {
        let roots = self.roots_for(call.conversation);
        let mut f = Facts {
            tool: call.tool.name(),
            conversation: call.conversation,
            kind: call.tool.kind(),
            mcp: call.tool.mcp_name(),
            read_only,
            plan: None,
            questions: None,
            paths: Vec::new(),
            commands: Vec::new(),
            lines: Vec::new(),
            hazards: Vec::new(),
            hosts: Vec::new(),
            names: Vec::new(),
            invoked: Vec::new(),
            mcp_servers: Vec::new(),
            roots: Arc::clone(&roots),
        };
        for access in call.accesses {
            match access {
                Access::Read(p) | Access::Write(p) => f.paths.push(PathItem {
                    path: p.clone(),
                    write: matches!(access, Access::Write(_)),
                    facts: roots.apply(path_facts(p, &roots.working, &self.data)?),
                }),
                Access::Exec { command, cwd } => {
                    let analysis = analyze(command);
                    f.lines.push(command.trim().to_string());
                    f.hazards.extend(analysis.hazards.iter().cloned());
                    let redirects = analysis
                        .file_writes()
                        .map(|r| (r, true))
                        .chain(analysis.reads.iter().map(|r| (r, false)));
                    for (r, write) in redirects {
                        let Dirs::Known(dirs) = &r.dir else {
                            f.hazards.push(format!(
                                "{} `{}` after a `cd` that cannot be followed",
                                if write { "writes to" } else { "reads" },
                                r.target
                            ));
                            continue;
                        };
                        for dir in dirs {
                            let raw = shell_path(cwd, dir)
                                .and_then(|base| shell_path(&base, &r.target))
                                .map_err(|e| {
                                    let verb = if write { "writes to" } else { "reads" };
                                    format!(
                                        "The command {verb} `{}`, which is refused: {e}.",
                                        r.target
                                    )
                                })?;
                            f.paths.push(PathItem {
                                facts: roots.apply(shell_path_facts(
                                    &raw,
                                    &roots.working,
                                    &self.data,
                                )?),
                                path: normalize_lexically(&raw),
                                write,
                            });
                        }
                    }
                    for cmd in analysis.commands {
                        f.commands.push(self.command_item(cmd, cwd, &roots));
                    }
                }
                Access::Fetch(url) => f.hosts.push(host_of(url)),
                Access::Named(n) => f.names.push(n.clone()),
                Access::Invoke(n) => f.invoked.push(n.clone()),
                Access::ApprovePlan(text) => f.plan = Some(text.clone()),
                Access::AskPerson(q) => f.questions = Some(q.clone()),
                Access::McpServer(s) => f.mcp_servers.push(s.clone()),
            }
        }
        Ok(f)
    }

    /// Everything no rule, mode, grant or allowance covers. Empty = allowed.
    ///
    /// The person's rules and session grants are *firm*. The `allowed-tools` of the skill or
    /// command now running ([`Self::allow_for_turn`]) are weaker: they cover a path only
    /// inside the working directories and off protected paths, and a command only when it is
    /// literal and every path it names is such a path; what they do not cover is decided as if
    /// they were not there. They never allow running another skill.
    fn gaps(&self, f: &Facts<'_>, mode: PermissionMode) -> Vec<Gap> {
        let allow = lock(&self.allow);
        let session = lock(&self.session_allow);
        let turns = lock(&self.turn_allow);
        let turn: &[Rule] = turns.get(f.conversation).map_or(&[], Vec::as_slice);
        let firm = || allow.iter().map(|r| &r.rule).chain(session.iter());
        let all_rules = || firm().chain(turn.iter());
        let bare_rule = |r: &Rule| r.is_bare() && r.names_tool(f.tool, f.kind, f.mcp);
        let bare = firm().any(bare_rule);
        let bare_turn = turn.iter().any(bare_rule);
        let accept_edits = mode == PermissionMode::AcceptEdits;
        let mut gaps = Vec::new();
        for item in &f.paths {
            let all_match = |r: &Rule| {
                r.path_family().is_some()
                    && item.facts.rule_candidates.iter().all(|c| {
                        r.matches_target(
                            if item.write {
                                Target::Write(c)
                            } else {
                                Target::Read(c)
                            },
                            false,
                        )
                    })
            };
            let turn_may = item.facts.inside && !item.facts.protected;
            let why = if item.write && item.facts.protected {
                // Only a session grant for this very path overrides protection.
                (!session.iter().any(all_match)).then_some(PathWhy::Protected)
            } else if item.write && item.facts.shadowed {
                // The real project, from a conversation in its own worktree: only a session
                // grant for this very path, whatever the project's rules say of its paths.
                (!session.iter().any(all_match)).then_some(PathWhy::Outside)
            } else if firm().any(all_match) || (turn_may && turn.iter().any(all_match)) {
                None
            } else if item.write {
                let edit_tool = matches!(f.kind, ToolKind::Edit | ToolKind::Execute);
                let granted = bare || bare_turn || (accept_edits && edit_tool);
                match (item.facts.inside, granted) {
                    (true, true) => None,
                    (true, false) => Some(PathWhy::NotAllowed),
                    (false, _) => Some(PathWhy::Outside),
                }
            } else if item.facts.inside || item.facts.in_data_dir {
                // Reading inside is fine for read-only tools and for a shell's `< file`.
                let granted = bare || (bare_turn && item.facts.inside);
                (!(f.read_only || granted || f.kind == ToolKind::Execute))
                    .then_some(PathWhy::NotAllowed)
            } else {
                Some(PathWhy::Outside)
            };
            if let Some(why) = why {
                gaps.push(Gap::Path {
                    path: item.path.clone(),
                    write: item.write,
                    why,
                });
            }
        }
        gaps.extend(f.hazards.iter().map(|h| Gap::Hazard(h.clone())));
        for item in &f.commands {
            let text = item.cmd.text();
            let args_inside = |protect: bool| {
                item.args.iter().all(|a| {
                    a.as_ref()
                        .is_ok_and(|p| (p.inside || p.in_data_dir) && !(protect && p.protected))
                })
            };
            let rule_covers = |r: &Rule| {
                matches!(r.spec, Specifier::Command(_))
                    && r.matches_target(Target::Command(&text), false)
            };
            let execute = f.kind == ToolKind::Execute;
            let turn_may = item.cmd.literal
                && item
                    .args
                    .iter()
                    .all(|a| a.as_ref().is_ok_and(|p| p.inside && !p.protected));
            let covered = firm().any(rule_covers)
                || (bare && execute)
                || (turn_may && (turn.iter().any(rule_covers) || (bare_turn && execute)))
                || (item.read_only && args_inside(false))
                || (accept_edits
                    && item.cmd.literal
                    && ACCEPT_EDITS_COMMANDS.contains(&item.cmd.program())
                    && args_inside(true));
            if !covered {
                gaps.push(match (&item.exec_env, &item.concern, &item.unverified) {
                    (Some(vars), _, _) => Gap::ToolEnv {
                        cmd: item.cmd.clone(),
                        vars: vars.clone(),
                    },
                    (None, Some(why), _) => Gap::RepoConfig {
                        cmd: item.cmd.clone(),
                        why: why.clone(),
                    },
                    (None, None, Some(why)) => Gap::Unverified {
                        cmd: item.cmd.clone(),
                        why: why.clone(),
                    },
                    (None, None, None) => Gap::Command(item.cmd.clone()),
                });
            }
        }
        let any_bare = bare || bare_turn;
        for host in &f.hosts {
            if !(any_bare
                || all_rules().any(|r| {
                    r.names_tool(f.tool, f.kind, f.mcp)
                        && r.matches_target(Target::Host(host), false)
                }))
            {
                gaps.push(Gap::Host(host.clone()));
            }
        }
        let names = |r: &Rule, name: &str| {
            r.names_tool(f.tool, f.kind, f.mcp) && r.matches_target(Target::Name(name), false)
        };
        for name in &f.names {
            // A read-only call's names need no grant (which agent runs); deny rules still apply.
            if !(any_bare || f.read_only || all_rules().any(|r| names(r, name))) {
                gaps.push(Gap::Name(name.clone()));
            }
        }
        for name in &f.invoked {
            // Only the person says which skill runs: their rules, or their answer.
            if !(bare || firm().any(|r| names(r, name))) {
                gaps.push(Gap::Name(name.clone()));
            }
        }
        let has_targets = !(f.paths.is_empty()
            && f.commands.is_empty()
            && f.hazards.is_empty()
            && f.hosts.is_empty()
            && f.names.is_empty()
            && f.invoked.is_empty());
        if !(has_targets || f.read_only || any_bare) {
            gaps.push(Gap::Tool);
        }
        gaps
    }

    /// Ask the person, or, when no one can be asked, refuse saying what would allow it.
    fn ask_or_refuse(
        &self,
        call: &CallInfo<'_>,
        f: &Facts<'_>,
        gaps: Vec<Gap>,
        reason: String,
        mode: PermissionMode,
    ) -> GateOutcome {
        let tool = f.tool;
        let derived: Vec<Option<(String, String, String)>> = gaps
            .iter()
            .map(|g| gap_rule(g, tool, &f.roots.root))
            .collect();
        // Asked because of an ask rule or a hook (no gaps): only this call can be allowed.
        let all_grantable = !derived.is_empty() && derived.iter().all(Option::is_some);
        let parts: Vec<&(String, String, String)> = derived.iter().flatten().collect();
        let saveable: Vec<String> = parts
            .iter()
            .map(|p| p.1.clone())
            .filter(|s| !s.is_empty())
            .collect();
        if !self.interactive || mode == PermissionMode::DontAsk {
            let rules = if all_grantable && saveable.len() == parts.len() {
                saveable
            } else {
                Vec::new()
            };
            let write = f.paths.iter().any(|p| p.write) || f.kind == ToolKind::Edit;
            let mut message = headless_message(
                tool,
                &reason,
                &rules,
                mode == PermissionMode::DontAsk,
                write,
            );
            let outside = gaps.iter().find_map(|g| match g {
                Gap::Path {
                    path,
                    why: PathWhy::Outside,
                    ..
                } => path.parent(),
                _ => None,
            });
            if let Some(dir) = outside {
                message.push_str(&format!(
                    " The path is outside the working directories; --add-dir {} would add it.",
                    dir.display()
                ));
            }
            return GateOutcome::Deny { message };
        }
        let scope: Vec<Rule> = if all_grantable {
            parts
                .iter()
                .filter_map(|p| Rule::parse(&p.0, &self.rule_ctx).ok())
                .collect()
        } else {
            Vec::new()
        };
        let deny_scope = if scope.is_empty() {
            self.exact_rules(f)
        } else {
            scope.clone()
        };
        lock(&self.pending).insert(
            call.call_id.to_string(),
            Pending {
                scope: scope.clone(),
                deny_scope,
            },
        );
        GateOutcome::Ask(Box::new(PermissionRequest {
            id: 0,
            call_id: call.call_id.to_string(),
            tool: tool.to_string(),
            title: call.title.to_string(),
            input: call.raw_input.clone(),
            reason,
            preview: call.preview.map(|p| p.display.clone()),
            session_scope: (!scope.is_empty()).then(|| {
                parts
                    .iter()
                    .map(|p| p.2.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            saveable_rule: (all_grantable && saveable.len() == 1 && parts.len() == 1)
                .then(|| saveable[0].clone()),
            background_task: None,
            kind: RequestKind::Tool,
        }))
    }

    /// Rules matching exactly this call's commands, paths, hosts and names (for "deny for this
    /// session" when there is no broader scope).
    fn exact_rules(&self, f: &Facts<'_>) -> Vec<Rule> {
        let tool = f.tool;
        let mut texts: Vec<String> = Vec::new();
        let commands = f.commands.iter();
        texts.extend(commands.filter_map(|c| ToolKind::Execute.rule(&c.cmd.text())));
        texts.extend(f.paths.iter().filter_map(|p| {
            let family = if p.write {
                ToolKind::Edit
            } else {
                ToolKind::Read
            };
            family.rule(&format!("/{}", p.path.display()))
        }));
        let hosts = f.hosts.iter();
        texts.extend(hosts.filter_map(|h| ToolKind::Fetch.rule(&format!("domain:{h}"))));
        let names = f.names.iter().chain(&f.invoked);
        texts.extend(names.map(|n| format!("{tool}({n})")));
        if texts.is_empty() {
            texts.push(tool.to_string());
        }
        texts
            .iter()
            .filter_map(|t| Rule::parse(t, &self.rule_ctx).ok())
            .collect()
    }
}

/// Whether a deny/ask-side rule matches any part of the call.
fn blocks(rule: &Rule, f: &Facts<'_>) -> bool {
    // A rule on all of a server's tools covers its resources too.
    if f.mcp_servers.iter().any(|s| rule.names_whole_server(s)) {
        return true;
    }
    if rule.is_bare() {
        return rule.names_tool(f.tool, f.kind, f.mcp);
    }
    match rule.spec {
        Specifier::Path { .. } => {
            f.paths.iter().any(|p| {
                p.facts.blocking_candidates().any(|c| {
                    rule.matches_target(
                        if p.write {
                            Target::Write(c)
                        } else {
                            Target::Read(c)
                        },
                        true,
                    )
                })
            }) || f
                .commands
                .iter()
                .flat_map(|c| c.args.iter().flatten())
                .any(|p| {
                    p.blocking_candidates()
                        .any(|c| rule.matches_target(Target::Read(c), true))
                })
        }
        Specifier::Command(_) => {
            f.commands.iter().any(|c| {
                // `/usr/bin/curl x` is `curl x` to a deny rule.
                let short = std::iter::once(c.cmd.program())
                    .chain(c.cmd.words.iter().skip(1).map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                rule.matches_target(Target::Command(&c.cmd.text()), true)
                    || rule.matches_target(Target::Command(&short), true)
            }) || f
                .lines
                .iter()
                .any(|l| rule.matches_target(Target::Command(l), true))
        }
        Specifier::Domain { .. } => f
            .hosts
            .iter()
            .any(|h| rule.matches_target(Target::Host(h), true)),
        Specifier::Name(_) => {
            rule.names_tool(f.tool, f.kind, f.mcp)
                && f.names
                    .iter()
                    .chain(&f.invoked)
                    .any(|n| rule.matches_target(Target::Name(n), true))
        }
        Specifier::Any => rule.names_tool(f.tool, f.kind, f.mcp),
    }
}

/// The host of a URL (lower case), or the text itself when it does not parse.
fn host_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_else(|| url.to_string())
}

/// The refusal of a call while settings are broken: what is wrong, where, and what to do.
fn broken_settings_message(tool: &str, problems: &[String]) -> String {
    let mut message = format!(
        "{tool} was refused: cairn's settings could not be read completely, so deny rules, ask \
         rules or PreToolUse hooks may be missing. Until the user fixes the settings and \
         restarts cairn, only read-only tools run (Read, Glob, Grep, read-only commands). \
         Tell the user what to fix; do not retry this call.\nProblems:"
    );
    for p in problems {
        message.push_str("\n  ");
        message.push_str(p);
    }
    message
}
