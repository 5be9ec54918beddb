//! ToolSearch (alias `tool_search`) and the catalog it searches: the deferred tools of one
//! conversation (announced by name only) and which of them the model has loaded.
//!
//! The core publishes the catalog before each request ([`DeferredTools::publish`]) and decides
//! what a loaded tool looks like on the wire; this module only matches queries, keeps the
//! loaded list (in load order: the order OpenAI-compatible tool lists grow in) and answers the
//! model. `select:A,B` loads exactly those tools; any other query ranks the deferred tools by
//! their name words (`mcp__server__tool` and `EnterPlanMode` split into words) and description
//! words, `+word` making a word required. It does no I/O, but a query waits for the MCP servers
//! still connecting (their tools may be what it asks for); a query it cannot match is an
//! answer, not an error.

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Effect, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput, ToolResultBlock,
};
use crate::protocol::Display;
use crate::session::context::SessionContext;

pub const NAME: &str = "ToolSearch";

/// How many tools a keyword query loads unless it says otherwise.
pub const DEFAULT_MAX_RESULTS: usize = 5;

/// A deferred tool as the model may load it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub description: String,
    pub schema: Value,
    name_lower: String,
    name_words: Vec<String>,
    description_words: Vec<String>,
}

impl Entry {
    pub fn new(name: impl Into<String>, description: impl Into<String>, schema: Value) -> Entry {
        let name = name.into();
        let description = description.into();
        let mut description_words = words(&description);
        description_words.sort();
        description_words.dedup();
        Entry {
            name_lower: name.to_lowercase(),
            name_words: words(&name),
            description_words,
            name,
            description,
            schema,
        }
    }

    /// The first line of the description, cut to about 100 characters: what the model sees
    /// before it loads the tool.
    pub fn summary(&self) -> String {
        let line = self.description.lines().next().unwrap_or("").trim();
        let first = line.split_inclusive(". ").next().unwrap_or(line).trim();
        if first.chars().count() <= 100 {
            return first.to_string();
        }
        let cut: String = first.chars().take(99).collect();
        format!("{}…", cut.trim_end())
    }

    /// Its definition, as Claude Code lists loaded tools for endpoints without references.
    fn definition(&self) -> String {
        let def = json!({
            "name": self.name,
            "description": self.description,
            "parameters": self.schema,
        });
        format!("<function>{def}</function>")
    }
}

/// Lower-case words of a name or text: split at anything not alphanumeric and at lower-to-upper
/// case changes (`EnterPlanMode` -> enter, plan, mode; `mcp__github__create_issue` -> mcp,
/// github, create, issue).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_numeric();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How well one query word fits an entry (0: not at all).
fn word_score(entry: &Entry, word: &str) -> u32 {
    if entry.name_words.iter().any(|w| w == word) {
        return 10;
    }
    if word.len() >= 3 && entry.name_words.iter().any(|w| w.starts_with(word)) {
        return 6;
    }
    if word.len() >= 3 && entry.name_lower.contains(word) {
        return 4;
    }
    if entry
        .description_words
        .binary_search_by(|w| w.as_str().cmp(word))
        .is_ok()
    {
        return 2;
    }
    if word.len() >= 4 && entry.description_words.iter().any(|w| w.starts_with(word)) {
        return 1;
    }
    0
}

/// The indexes of the best `max` entries for a keyword query, best first (ties by name).
/// Words with a leading `+` must match; an entry matching no word is left out.
pub fn rank(entries: &[Entry], query: &str, max: usize) -> Vec<usize> {
    let whole = query.trim().to_lowercase();
    let mut required = Vec::new();
    let mut optional = Vec::new();
    for token in query.split_whitespace() {
        match token.strip_prefix('+') {
            Some(rest) => required.extend(words(rest)),
            None => optional.extend(words(token)),
        }
    }
    let mut scored: Vec<(u32, usize)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let mut total = 0;
            for w in &required {
                let s = word_score(e, w);
                if s == 0 {
                    return None;
                }
                total += s;
            }
            total += optional.iter().map(|w| word_score(e, w)).sum::<u32>();
            if e.name_lower == whole {
                total += 100;
            }
            (total > 0).then_some((total, i))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| entries[a.1].name.cmp(&entries[b.1].name))
    });
    scored.into_iter().take(max).map(|(_, i)| i).collect()
}

#[derive(Default)]
struct Catalog {
    /// The tools deferred right now, as last published.
    entries: Vec<Entry>,
    /// Deferred tools the model loaded, in load order.
    loaded: Vec<String>,
    /// The conversation's registry, whose late tools (MCP servers that connect while a query
    /// waits for them) a query may take in before the core publishes them.
    registry: Option<super::ToolRegistry>,
}

/// One conversation's deferred tools and the ones loaded, shared by the core (which publishes
/// and records them), the executor (which refuses calls of tools not loaded) and ToolSearch.
/// Cloning shares it.
#[derive(Clone, Default)]
pub struct DeferredTools(Arc<Mutex<Catalog>>);

impl DeferredTools {
    fn lock(&self) -> MutexGuard<'_, Catalog> {
        // A poisoned lock only means a panic elsewhere mid-update; the lists are still whole.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tools deferred from now on.
    pub fn publish(&self, entries: Vec<Entry>) {
        self.lock().entries = entries;
    }

    /// Follow `registry`'s late tools: [`wait_for_servers`](Self::wait_for_servers) takes in
    /// the MCP tools of servers that connected meanwhile.
    pub fn follow(&self, registry: super::ToolRegistry) {
        self.lock().registry = Some(registry);
    }

    /// The MCP servers still connecting, as the followed registry's catalog says.
    pub fn connecting(&self) -> Vec<String> {
        let registry = self.lock().registry.clone();
        registry
            .and_then(|r| r.late().and_then(super::LateTools::catalog))
            .map(|c| c.connecting())
            .unwrap_or_default()
    }

    /// Wait for the MCP servers still connecting (each bounded by its start-up timeout), then
    /// take their tools in as deferred tools a query can find. Returns the servers waited
    /// for; at once (and empty) when none is connecting.
    pub async fn wait_for_servers(&self) -> Vec<String> {
        let Some(mut registry) = self.lock().registry.clone() else {
            return Vec::new();
        };
        let Some(catalog) = registry.late().and_then(super::LateTools::catalog) else {
            return Vec::new();
        };
        let waited = catalog.connecting();
        if waited.is_empty() {
            return waited;
        }
        catalog.wait_connecting().await;
        registry.refresh_late();
        let mut c = self.lock();
        let new: Vec<Entry> = registry
            .iter()
            .filter(|t| t.kind() == ToolKind::Mcp)
            .filter(|t| !c.entries.iter().any(|e| e.name == t.name()))
            .map(|t| Entry::new(t.name(), t.description(), t.input_schema()))
            .collect();
        c.entries.extend(new);
        waited
    }

    /// The loaded tools, in load order.
    pub fn loaded(&self) -> Vec<String> {
        self.lock().loaded.clone()
    }

    pub fn is_loaded(&self, name: &str) -> bool {
        self.lock().loaded.iter().any(|n| n == name)
    }

    /// Mark `names` loaded (those already loaded keep their place).
    pub fn load(&self, names: &[String]) {
        let mut c = self.lock();
        for n in names {
            if !c.loaded.contains(n) {
                c.loaded.push(n.clone());
            }
        }
    }

    /// Replace the loaded list (a resumed session's, or none after `/clear`).
    pub fn restore(&self, names: Vec<String>) {
        self.lock().loaded = names;
    }

    /// Whether `name` is deferred (loaded or not).
    pub fn is_deferred(&self, name: &str) -> bool {
        self.lock().entries.iter().any(|e| e.name == name)
    }

    /// Whether `name` is deferred and not loaded: a call must wait for ToolSearch.
    pub fn is_pending(&self, name: &str) -> bool {
        let c = self.lock();
        c.entries.iter().any(|e| e.name == name) && !c.loaded.iter().any(|n| n == name)
    }

    /// The deferred tools not loaded, with their one-line summaries, in catalog order.
    pub fn pending(&self) -> Vec<(String, String)> {
        let c = self.lock();
        c.entries
            .iter()
            .filter(|e| !c.loaded.contains(&e.name))
            .map(|e| (e.name.clone(), e.summary()))
            .collect()
    }

    /// Answer a query: the entries it loads, and what it asked for that is not there.
    pub fn find(&self, query: &str, max: usize) -> Found {
        let c = self.lock();
        if let Some(list) = query.trim().strip_prefix("select:") {
            let mut found = Found::default();
            for want in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let entry = c
                    .entries
                    .iter()
                    .find(|e| e.name == want)
                    .or_else(|| c.entries.iter().find(|e| e.name.eq_ignore_ascii_case(want)));
                match entry {
                    Some(e) if !found.entries.iter().any(|f| f.name == e.name) => {
                        found.entries.push(e.clone())
                    }
                    Some(_) => {}
                    None => found.missing.push(want.to_string()),
                }
            }
            return found;
        }
        Found {
            entries: rank(&c.entries, query, max)
                .into_iter()
                .map(|i| c.entries[i].clone())
                .collect(),
            missing: Vec::new(),
        }
    }

    /// The names of every deferred tool, for an answer that found nothing.
    fn names(&self) -> Vec<String> {
        self.lock().entries.iter().map(|e| e.name.clone()).collect()
    }
}

/// What a query found.
#[derive(Debug, Default)]
pub struct Found {
    pub entries: Vec<Entry>,
    /// `select:` names that are not deferred tools.
    pub missing: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// `select:Name1,Name2` for exactly those, or keywords (`+word` required).
    pub query: String,
    /// Most tools keywords load (default 5).
    #[serde(default)]
    pub max_results: Option<usize>,
}

pub struct ToolSearchTool;

#[async_trait]
impl Tool for ToolSearchTool {
    type Input = ToolSearchInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(NAME, ToolKind::Other)
            .aliases(&["tool_search"])
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "Loads deferred tools (named in the system prompt or reminders) so they can be called; \
         they stay loaded for the session. Waits for MCP servers still connecting."
            .into()
    }

    fn title(&self, input: &ToolSearchInput, _ctx: &SessionContext) -> String {
        format!("{NAME} {}", input.query.trim())
    }

    async fn call(
        &self,
        input: ToolSearchInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let max = input
            .max_results
            .unwrap_or(DEFAULT_MAX_RESULTS)
            .clamp(1, 50);
        // A server still connecting may hold what the query asks for: wait for it (bounded by
        // MCP_TIMEOUT) rather than answer that nothing matches. A `select:` of tools all
        // known already needs no wait.
        let known = input.query.trim().starts_with("select:")
            && ctx.deferred.find(&input.query, max).missing.is_empty();
        if !known {
            tokio::select! {
                _ = ctx.deferred.wait_for_servers() => {}
                _ = ctx.cancel.cancelled() => {
                    return Err(ToolError::new("Interrupted by the user."));
                }
            }
        }
        let found = ctx.deferred.find(&input.query, max);
        Ok(answer(&input.query, found, &ctx.deferred))
    }
}

/// The result for a query: a `tool_reference` per loaded tool, then text listing each with its
/// schema (the core sends one or the other, as the endpoint takes them).
fn answer(query: &str, found: Found, deferred: &DeferredTools) -> ToolOutput {
    let mut notes = Vec::new();
    if !found.missing.is_empty() {
        notes.push(format!(
            "Not deferred tools (already available, or no such tool): {}.",
            found.missing.join(", ")
        ));
    }
    if found.entries.is_empty() {
        let all = deferred.names();
        let known = if all.is_empty() {
            "There are no deferred tools.".to_string()
        } else {
            format!("Deferred tools: {}.", all.join(", "))
        };
        notes.push(format!(
            "No deferred tools match \"{}\". {known}",
            query.trim()
        ));
        return ToolOutput::text(notes.join("\n"));
    }
    let names: Vec<String> = found.entries.iter().map(|e| e.name.clone()).collect();
    let mut text = format!(
        "Loaded {} tool{}: {}. They stay available for the rest of the session; call them \
         directly.\n<functions>\n",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
    for e in &found.entries {
        text.push_str(&e.definition());
        text.push('\n');
    }
    text.push_str("</functions>");
    for n in notes {
        text.push('\n');
        text.push_str(&n);
    }
    let mut blocks: Vec<ToolResultBlock> = names
        .iter()
        .map(|n| ToolResultBlock::ToolReference {
            tool_name: n.clone(),
        })
        .collect();
    blocks.push(ToolResultBlock::Text { text });
    let display = Display::Text {
        text: format!("Loaded {}", names.join(", ")),
    };
    ToolOutput::blocks(blocks, display).with_effect(Effect::LoadTools(names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, description: &str) -> Entry {
        Entry::new(
            name,
            description,
            json!({"type": "object", "properties": {}}),
        )
    }

    fn catalog() -> DeferredTools {
        let d = DeferredTools::default();
        d.publish(vec![
            entry(
                "EnterPlanMode",
                "Switch to plan mode to design before editing.",
            ),
            entry("ExitPlanMode", "Present the plan for approval."),
            entry(
                "mcp__github__create_issue",
                "Open a new issue in a repository.",
            ),
            entry(
                "mcp__slack__send_message",
                "Post a message to a Slack channel.",
            ),
            entry("mcp__everything__echo", "Echoes back the input."),
        ]);
        d
    }

    fn names(found: &Found) -> Vec<&str> {
        found.entries.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn words_split_mcp_names_camel_case_and_punctuation() {
        assert_eq!(
            words("mcp__github__create_issue"),
            ["mcp", "github", "create", "issue"]
        );
        assert_eq!(words("EnterPlanMode"), ["enter", "plan", "mode"]);
        assert_eq!(
            words("Echoes back, the-input."),
            ["echoes", "back", "the", "input"]
        );
    }

    #[test]
    fn select_loads_exactly_the_names_given_and_reports_the_rest() {
        let found = catalog().find("select:mcp__everything__echo, exitplanmode,Read", 5);
        assert_eq!(names(&found), ["mcp__everything__echo", "ExitPlanMode"]);
        assert_eq!(found.missing, ["Read"]);
    }

    #[test]
    fn keywords_rank_name_words_above_description_words() {
        let d = catalog();
        assert_eq!(names(&d.find("slack", 5)), ["mcp__slack__send_message"]);
        // "message" is a name word of the Slack tool and nowhere else.
        assert_eq!(names(&d.find("message", 5))[0], "mcp__slack__send_message");
        assert_eq!(names(&d.find("plan", 5)), ["EnterPlanMode", "ExitPlanMode"]);
        assert_eq!(names(&d.find("plan", 1)), ["EnterPlanMode"]);
        // A description word alone still finds the tool.
        assert_eq!(
            names(&d.find("repository", 5)),
            ["mcp__github__create_issue"]
        );
        assert!(d.find("kubernetes", 5).entries.is_empty());
    }

    #[test]
    fn a_required_word_excludes_tools_without_it() {
        let d = catalog();
        assert_eq!(
            names(&d.find("+plan exit", 5)),
            ["ExitPlanMode", "EnterPlanMode"]
        );
        assert_eq!(
            names(&d.find("+github message", 5)),
            ["mcp__github__create_issue"]
        );
    }

    #[test]
    fn loading_keeps_order_and_pending_leaves_loaded_tools_out() {
        let d = catalog();
        assert!(d.is_pending("mcp__everything__echo"));
        assert!(!d.is_pending("Read"), "not deferred");
        d.load(&["mcp__slack__send_message".into(), "ExitPlanMode".into()]);
        d.load(&["ExitPlanMode".into()]);
        assert_eq!(d.loaded(), ["mcp__slack__send_message", "ExitPlanMode"]);
        assert!(!d.is_pending("ExitPlanMode"));
        assert_eq!(d.pending().len(), 3);
    }

    #[test]
    fn the_answer_references_each_tool_and_lists_its_schema() {
        let d = catalog();
        let out = answer(
            "select:mcp__everything__echo",
            d.find("select:mcp__everything__echo", 5),
            &d,
        );
        assert_eq!(
            out.effects,
            [Effect::LoadTools(vec!["mcp__everything__echo".into()])]
        );
        let refs: Vec<&str> = out.content.tool_references().collect();
        assert_eq!(refs, ["mcp__everything__echo"]);
        let text = out.content.text();
        assert!(
            text.starts_with("Loaded 1 tool: mcp__everything__echo."),
            "{text}"
        );
        assert!(text.contains(r#"<function>{"name":"mcp__everything__echo","description":"Echoes back the input.","parameters":{"type":"object","properties":{}}}</function>"#), "{text}");
        let none = answer("kubernetes", d.find("kubernetes", 5), &d);
        assert!(none.effects.is_empty());
        assert!(
            none.content.text().starts_with(
                "No deferred tools match \"kubernetes\". Deferred tools: EnterPlanMode,"
            )
        );
    }

    #[test]
    fn summaries_keep_the_first_sentence_of_the_first_line() {
        let e = entry("x", "Echoes back the input. Use it to test.\nMore.");
        assert_eq!(e.summary(), "Echoes back the input.");
        let long = entry("y", &"word ".repeat(40));
        assert!(long.summary().chars().count() <= 100);
    }
}
