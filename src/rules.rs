//! Permission rules in Claude Code syntax: parse once, match many times.
//!
//! A rule is `Tool` or `Tool(specifier)`. The specifier's meaning depends on the tool: a
//! command pattern for `Bash`, a gitignore-style path pattern with anchors for `Read`/`Edit`
//! (and the other file tools), `domain:` for `WebFetch`, a name for `Agent`/`Skill`. MCP tools
//! are matched by name (`mcp__server`, `mcp__server__*`, `mcp__server__tool`). Parsing never
//! panics: a rule that cannot be understood is an error the settings loader reports and skips.
//! This module only answers "does this rule match"; the order of evaluation is the gate's.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;

use crate::tools::ToolKind;
use crate::tools::kind::{RuleSyntax, canonical_rule_word, rule_syntax};

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
        })
    }

    /// Whether the rule has no specifier (it matches every call of its tools).
    pub fn is_bare(&self) -> bool {
        matches!(self.spec, Specifier::Any)
    }

    /// Whether the rule names the tool `tool` of kind `kind` (by name, by a word its kind
    /// shares, or by MCP prefix).
    pub fn names_tool(&self, tool: &str, kind: ToolKind) -> bool {
        let rule = self.tool.as_str();
        let tool = canonical_rule_word(tool);
        if rule == tool {
            return true;
        }
        if let Some(prefix) = rule.strip_suffix('*') {
            return tool.starts_with(prefix);
        }
        if kind.shares_rules() && ToolKind::of_rule_word(rule) == Some(kind) {
            return true;
        }
        // `mcp__server` covers every tool of that server.
        if rule.starts_with("mcp__") && rule.matches("__").count() == 1 {
            return tool
                .strip_prefix(rule)
                .is_some_and(|rest| rest.starts_with("__"));
        }
        false
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
    let mut out = Vec::new();
    for value in values {
        let mut depth = 0usize;
        let mut current = String::new();
        for c in value.chars() {
            match c {
                '(' => {
                    depth += 1;
                    current.push(c);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                ',' | ' ' | '\t' | '\n' if depth == 0 => {
                    if !current.trim().is_empty() {
                        out.push(current.trim().to_string());
                    }
                    current.clear();
                }
                _ => current.push(c),
            }
        }
        if !current.trim().is_empty() {
            out.push(current.trim().to_string());
        }
    }
    out
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
    fn splits_cli_lists() {
        assert_eq!(
            split_rule_list(&["Bash(git log *),Read".into(), "Edit WebFetch".into()]),
            vec!["Bash(git log *)", "Read", "Edit", "WebFetch"]
        );
    }
}
