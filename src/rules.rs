//! Permission rules in Claude Code syntax: parse once, match many times.
//!
//! A rule is `Tool` or `Tool(specifier)`. The specifier's meaning depends on the tool: a
//! command pattern for `Bash`, a gitignore-style path pattern with anchors for `Read`/`Edit`
//! (and the other file tools), `domain:` for `WebFetch`, a name for `Agent`/`Skill`. MCP tools
//! are matched on their (server, tool) pair, never on the joined name: `mcp__server` (every
//! tool of that server), `mcp__server__*` (the same), `mcp__server__tool`, with `*` as a
//! wildcard inside either part (`mcp__*` is every MCP tool). Parsing never
//! panics: a rule that cannot be understood is an error the settings loader reports and skips.
//! This module only answers "does this rule match"; the order of evaluation is the gate's.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;

use crate::tools::ToolKind;
use crate::tools::kind::{McpName, RuleSyntax, canonical_rule_word, rule_syntax};

/// Everything a path pattern's anchors resolve against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleContext {
    /// `/path` anchors here (the settings file's project root).
    pub root: PathBuf,
    /// `path` and `./path` anchor here.
    pub cwd: PathBuf,
    /// `~/path` anchors here.
    pub home: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("empty rule")]
    Empty,
    #[error("`{0}` is not a tool name")]
    BadToolName(String),
    #[error("missing `)` at the end")]
    Unclosed,
    #[error("empty specifier `()`; write the bare tool name to match every call")]
    EmptySpecifier,
    #[error("{tool} rules take `domain:<host>` (e.g. `WebFetch(domain:example.com)`)")]
    BadDomain { tool: String },
    #[error("MCP rules take no specifier: write `mcp__server` or `mcp__server__tool`")]
    McpSpecifier,
    #[error(
        "`{0}` is not an MCP rule: write `mcp__server`, `mcp__server__*` or `mcp__server__tool`"
    )]
    BadMcpRule(String),
    #[error("bad pattern `{pattern}`: {message}")]
    BadPattern { pattern: String, message: String },
    #[error("`~/` needs a home directory, and none is known")]
    NoHome,
}

/// Which kind of file access a path rule speaks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFamily {
    Read,
    Edit,
}

#[derive(Debug, Clone)]
pub enum Specifier {
    /// Bare `Tool` or `Tool(*)`: every call of the tool.
    Any,
    /// A Bash command pattern, compiled.
    Command(Regex),
    Path {
        family: PathFamily,
        globs: Vec<GlobMatcher>,
    },
    /// `domain:host`; `subdomains` for `domain:*.host`.
    Domain { host: String, subdomains: bool },
    /// A name pattern (`Agent(Explore)`, `Skill(git-*)`).
    Name(Regex),
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// As written (for messages and `cairn config`).
    pub text: String,
    /// The tool part (`Bash`, `Edit`, `mcp__github__*`).
    pub tool: String,
    pub spec: Specifier,
    /// For an MCP rule (`mcp__…`): the server and tool it names.
    mcp: Option<McpPattern>,
}

/// What an MCP rule names: a server (and a tool of it), each part a pattern where `*` is any
/// text. `mcp__a__b__c` is server `a`, tool `b__c`: server names never contain `__` (the MCP
/// configuration refuses them), so the first `__` after `mcp__` is where the server ends.
#[derive(Debug, Clone, PartialEq, Eq)]
struct McpPattern {
    server: String,
    /// `None`: every tool of the server.
    tool: Option<String>,
}

impl McpPattern {
    fn parse(word: &str) -> Result<Option<McpPattern>, RuleError> {
        let Some(rest) = word.strip_prefix("mcp__") else {
            return Ok(None);
        };
        let bad = || RuleError::BadMcpRule(word.to_string());
        let (server, tool) = match rest.split_once("__") {
            Some((server, tool)) => (server, Some(tool)),
            None => (rest, None),
        };
        if server.is_empty() || tool.is_some_and(str::is_empty) {
            return Err(bad());
        }
        Ok(Some(McpPattern {
            server: server.to_string(),
            tool: tool.filter(|t| *t != "*").map(str::to_string),
        }))
    }

    fn matches(&self, name: McpName<'_>) -> bool {
        wildcard_match(&self.server, name.server)
            && self
                .tool
                .as_deref()
                .is_none_or(|t| wildcard_match(t, name.tool))
    }
}

/// `pattern` with `*` as any text (possibly empty), against the whole of `text`.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// What a call touches, as rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A file read, absolute.
    Read(&'a Path),
    /// A file write, absolute.
    Write(&'a Path),
    /// One simple command of a command line (wrappers stripped).
    Command(&'a str),
    /// A host being fetched.
    Host(&'a str),
    Name(&'a str),
}

impl Rule {
    pub fn parse(text: &str, ctx: &RuleContext) -> Result<Rule, RuleError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RuleError::Empty);
        }
        let (tool, spec) = match text.find('(') {
            Some(open) => {
                let inner = text[open + 1..]
                    .strip_suffix(')')
                    .ok_or(RuleError::Unclosed)?;
                (&text[..open], Some(inner))
            }
            None => (text, None),
        };
        let valid_name = tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
            && tool.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if !valid_name {
            return Err(RuleError::BadToolName(tool.to_string()));
        }
        let tool = canonical_rule_word(tool);
        let mcp = McpPattern::parse(tool)?;
        let spec = match spec {
            None | Some("*") => Specifier::Any,
            Some("") => return Err(RuleError::EmptySpecifier),
            Some(_) if tool.starts_with("mcp__") => return Err(RuleError::McpSpecifier),
            Some(s) => parse_specifier(tool, s, ctx)?,
        };
        Ok(Rule {
            text: text.to_string(),
            tool: tool.to_string(),
            spec,
            mcp,
        })
    }

    /// Whether the rule has no specifier (it matches every call of its tools).
    pub fn is_bare(&self) -> bool {
        matches!(self.spec, Specifier::Any)
    }

    /// Whether the rule names the tool `tool` of kind `kind` (by name, or by a word its kind
    /// shares); a tool of an MCP server (`mcp` is its pair) is named only by MCP rules, on
    /// the pair.
    /// Whether this is an MCP rule on every tool of `server` (`mcp__server`, `mcp__*`).
    pub fn names_whole_server(&self, server: &str) -> bool {
        self.mcp
            .as_ref()
            .is_some_and(|p| p.tool.is_none() && wildcard_match(&p.server, server))
    }

    /// Whether this is an MCP rule on every tool of every server (`mcp__*`).
    pub fn names_every_server(&self) -> bool {
        self.mcp
            .as_ref()
            .is_some_and(|p| p.tool.is_none() && p.server.chars().all(|c| c == '*'))
    }

    pub fn names_tool(&self, tool: &str, kind: ToolKind, mcp: Option<McpName<'_>>) -> bool {
        match (&self.mcp, mcp) {
            (Some(pattern), Some(name)) => return pattern.matches(name),
            // An MCP rule names no other tool; an MCP tool is named by no other rule but a
            // wildcard over every name that starts like theirs (`mcp*`).
            (Some(_), None) => return false,
            (None, Some(_)) => {
                return self
                    .tool
                    .strip_suffix('*')
                    .is_some_and(|prefix| "mcp__".starts_with(prefix));
            }
            (None, None) => {}
        }
        let rule = self.tool.as_str();
        let tool = canonical_rule_word(tool);
        if rule == tool {
            return true;
        }
        if let Some(prefix) = rule.strip_suffix('*') {
            return tool.starts_with(prefix);
        }
        kind.shares_rules() && ToolKind::of_rule_word(rule) == Some(kind)
    }

    /// Whether a path rule speaks about this target (regardless of tool names): a Read rule
    /// covers reads, and, when `blocking` (deny/ask), writes too; an Edit rule covers writes,
    /// and, when allowing, reads (edit permission implies read permission).
    pub fn matches_target(&self, target: Target<'_>, blocking: bool) -> bool {
        match (&self.spec, target) {
            (Specifier::Path { family, globs }, Target::Read(p) | Target::Write(p)) => {
                let is_write = matches!(target, Target::Write(_));
                let covers = match family {
                    PathFamily::Read => !is_write || blocking,
                    PathFamily::Edit => is_write || !blocking,
                };
                covers && globs.iter().any(|g| g.is_match(p))
            }
            (Specifier::Command(re), Target::Command(c)) => re.is_match(c.trim()),
            (Specifier::Domain { host, subdomains }, Target::Host(h)) => {
                let h = h.trim_end_matches('.').to_ascii_lowercase();
                if *subdomains {
                    h.strip_suffix(host.as_str())
                        .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1)
                } else {
                    h == *host
                }
            }
            (Specifier::Name(re), Target::Name(n)) => re.is_match(n),
            _ => false,
        }
    }

    /// The family of a path rule, if it is one.
    pub fn path_family(&self) -> Option<PathFamily> {
        match self.spec {
            Specifier::Path { family, .. } => Some(family),
            _ => None,
        }
    }
}

fn parse_specifier(tool: &str, spec: &str, ctx: &RuleContext) -> Result<Specifier, RuleError> {
    let family = match rule_syntax(tool) {
        RuleSyntax::Command => return Ok(Specifier::Command(command_pattern(spec)?)),
        RuleSyntax::Name => return Ok(Specifier::Name(wildcard_regex(spec, false)?)),
        RuleSyntax::Domain => return domain_specifier(tool, spec),
        RuleSyntax::ReadPath => PathFamily::Read,
        RuleSyntax::EditPath => PathFamily::Edit,
    };
    Ok(Specifier::Path {
        family,
        globs: path_globs(spec, ctx)?,
    })
}

fn domain_specifier(tool: &str, spec: &str) -> Result<Specifier, RuleError> {
    let host = spec
        .strip_prefix("domain:")
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty() && !h.contains(['/', ' ']))
        .ok_or_else(|| RuleError::BadDomain { tool: tool.into() })?;
    Ok(match host.strip_prefix("*.") {
        Some(rest) => Specifier::Domain {
            host: rest.to_string(),
            subdomains: true,
        },
        None => Specifier::Domain {
            host,
            subdomains: false,
        },
    })
}

/// A Bash pattern: `*` is any text (spaces included); a trailing ` *` or `:*` is a word
/// boundary that also matches the bare command (`ls *` matches `ls` and `ls -la`, not `lsof`).
fn command_pattern(spec: &str) -> Result<Regex, RuleError> {
    let spec = spec.trim();
    let spec = match spec.strip_suffix(":*") {
        Some(head) => format!("{head} *"),
        None => spec.to_string(),
    };
    wildcard_regex(&spec, true)
}

fn wildcard_regex(spec: &str, word_boundary_tail: bool) -> Result<Regex, RuleError> {
    let (body, tail) = match spec.strip_suffix(" *") {
        Some(head) if word_boundary_tail => (head, "(?: .*)?"),
        _ => (spec, ""),
    };
    let mut re = String::from("(?s)^");
    for (i, part) in body.split('*').enumerate() {
        if i > 0 {
            re.push_str(".*");
        }
        re.push_str(&regex::escape(part));
    }
    re.push_str(tail);
    re.push('$');
    Regex::new(&re).map_err(|e| RuleError::BadPattern {
        pattern: spec.to_string(),
        message: e.to_string(),
    })
}

/// gitignore-style path pattern -> globs over absolute paths. A pattern also matches
/// everything below what it names (a directory pattern covers its contents).
fn path_globs(spec: &str, ctx: &RuleContext) -> Result<Vec<GlobMatcher>, RuleError> {
    let spec = spec.trim();
    let anchored = |base: &Path, rest: &str| {
        let base = base.to_string_lossy();
        let base = base.trim_end_matches('/');
        format!("{}/{}", globset::escape(base), rest.trim_start_matches('/'))
    };
    let pattern = if let Some(rest) = spec.strip_prefix("//") {
        format!("/{rest}")
    } else if let Some(rest) = spec.strip_prefix("~/") {
        anchored(ctx.home.as_deref().ok_or(RuleError::NoHome)?, rest)
    } else if spec == "~" {
        anchored(ctx.home.as_deref().ok_or(RuleError::NoHome)?, "")
    } else if let Some(rest) = spec.strip_prefix('/') {
        anchored(&ctx.root, rest)
    } else if let Some(rest) = spec.strip_prefix("./") {
        anchored(&ctx.cwd, rest)
    } else if spec.trim_end_matches('/').contains('/') {
        anchored(&ctx.cwd, spec)
    } else {
        // A bare name matches at any depth, as in .gitignore.
        format!("**/{spec}")
    };
    let pattern = pattern.trim_end_matches('/').to_string();
    let pattern = if pattern.is_empty() {
        "/".into()
    } else {
        pattern
    };
    let mut globs = Vec::new();
    for p in [
        pattern.clone(),
        format!("{}/**", pattern.trim_end_matches('/')),
    ] {
        let glob = GlobBuilder::new(&p)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| RuleError::BadPattern {
                pattern: spec.to_string(),
                message: e.kind().to_string(),
            })?;
        globs.push(glob.compile_matcher());
    }
    Ok(globs)
}

/// Split `--allowedTools` values: each may hold several rules separated by commas or spaces
/// (outside parentheses, so `Bash(git log *)` stays whole).
pub fn split_rule_list(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| crate::commands::frontmatter::split_names(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RuleContext {
        RuleContext {
            root: "/proj".into(),
            cwd: "/proj/sub".into(),
            home: Some("/home/u".into()),
        }
    }

    fn rule(s: &str) -> Rule {
        Rule::parse(s, &ctx()).unwrap()
    }

    #[test]
    fn bash_patterns() {
        let r = rule("Bash(ls *)");
        assert!(r.matches_target(Target::Command("ls -la"), true));
        assert!(r.matches_target(Target::Command("ls"), true));
        assert!(!r.matches_target(Target::Command("lsof"), true));
        let r = rule("Bash(npm run test:*)");
        assert!(r.matches_target(Target::Command("npm run test --watch"), true));
        assert!(!r.matches_target(Target::Command("npm run testing"), true));
        let r = rule("Bash(git * main)");
        assert!(r.matches_target(Target::Command("git push origin main"), true));
        assert!(!r.matches_target(Target::Command("git push origin dev"), true));
    }

    #[test]
    fn path_anchors() {
        let t = |r: &Rule, p: &str| r.matches_target(Target::Read(Path::new(p)), true);
        assert!(t(&rule("Read(//etc/passwd)"), "/etc/passwd"));
        assert!(t(&rule("Read(~/.zshrc)"), "/home/u/.zshrc"));
        assert!(t(&rule("Read(/src/**)"), "/proj/src/a/b.rs"));
        assert!(!t(&rule("Read(/src/**)"), "/proj/sub/src/a.rs"));
        assert!(t(&rule("Read(./secrets/**)"), "/proj/sub/secrets/k"));
        assert!(t(&rule("Read(.env)"), "/any/where/.env"));
        assert!(t(&rule("Read(secrets)"), "/x/secrets/deep/file"));
        assert!(!t(&rule("Read(src/*.rs)"), "/proj/sub/src/a/b.rs"));
    }

    #[test]
    fn errors_are_clear() {
        let e = |s: &str| Rule::parse(s, &ctx()).unwrap_err().to_string();
        assert_eq!(e("Bash(ls"), "missing `)` at the end");
        assert_eq!(
            e("WebFetch(example.com)"),
            "WebFetch rules take `domain:<host>` (e.g. `WebFetch(domain:example.com)`)"
        );
        assert_eq!(e("(x)"), "`` is not a tool name");
    }

    #[test]
    fn mcp_rules_match_the_server_and_tool_pair() {
        let mcp = |server, tool| Some(McpName { server, tool });
        let names = |r: &str, server, tool| {
            let name = format!("mcp__{server}__{tool}");
            rule(r).names_tool(&name, ToolKind::Mcp, mcp(server, tool))
        };
        for r in ["mcp__safe", "mcp__safe__*"] {
            assert!(names(r, "safe", "wipe"), "{r}");
            assert!(names(r, "safe", "evil__wipe"), "{r}");
            // `mcp__safe__evil__wipe` of a server `safe__evil` is not a tool of `safe`.
            assert!(!names(r, "safe__evil", "wipe"), "{r}");
            assert!(!names(r, "safe_", "_wipe"), "{r}");
            assert!(!names(r, "safer", "wipe"), "{r}");
        }
        assert!(names("mcp__safe__wipe", "safe", "wipe"));
        assert!(!names("mcp__safe__wipe", "safe", "wiper"));
        assert!(!names("mcp__safe__evil", "safe", "evil__wipe"));
        assert!(names("mcp__safe__evil__wipe", "safe", "evil__wipe"));
        assert!(names("mcp__*", "any", "thing"));
        assert!(names("mcp__gh__create_*", "gh", "create_issue"));
        assert!(!names("mcp__gh__create_*", "gh", "delete_issue"));
        assert!(names("mcp__g*", "gh", "x") && !names("mcp__g*", "fs", "x"));
        assert!(
            names("mcp*", "any", "thing"),
            "a wildcard over `mcp…` covers MCP tools"
        );
        // MCP rules name only MCP tools, and other rules no MCP tool.
        assert!(!rule("mcp__safe").names_tool("mcp__safe__x", ToolKind::Other, None));
        assert!(!rule("Bash").names_tool("Bash", ToolKind::Mcp, mcp("Bash", "x")));
        let e = |s: &str| Rule::parse(s, &ctx()).unwrap_err().to_string();
        for bad in ["mcp__", "mcp____x", "mcp__a__"] {
            assert_eq!(
                e(bad),
                format!(
                    "`{bad}` is not an MCP rule: write `mcp__server`, `mcp__server__*` or \
                     `mcp__server__tool`"
                )
            );
        }
        assert_eq!(
            e("mcp__a(x)"),
            "MCP rules take no specifier: write `mcp__server` or `mcp__server__tool`"
        );
        assert!(rule("mcp__a(*)").is_bare());
    }

    #[test]
    fn wildcards_match_whole_names() {
        for (p, t, m) in [
            ("a*c", "abc", true),
            ("a*c", "abcd", false),
            ("*", "", true),
            ("a**", "a", true),
            ("*b*", "abc", true),
            ("ab*ba", "aba", false),
            ("x", "x", true),
            ("x", "xx", false),
        ] {
            assert_eq!(wildcard_match(p, t), m, "{p} {t}");
        }
    }

    #[test]
    fn splits_cli_lists() {
        assert_eq!(
            split_rule_list(&["Bash(git log *),Read".into(), "Edit WebFetch".into()]),
            vec!["Bash(git log *)", "Read", "Edit", "WebFetch"]
        );
    }
}
