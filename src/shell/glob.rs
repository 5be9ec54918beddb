//! Filename patterns in the arguments of read-only commands (`cat src/*.rs`), expanded the
//! way bash would before the gate judges the command.
//!
//! [`expand`] lists the directories a pattern walks and returns the command with every
//! pattern word followed by each name it may match, so the option grammars and the path
//! checks see what the program will really get: a file named `-i` or `--output=x` in the
//! directory is an option to the program, and a symlink out of the project is a path outside
//! it. Matching over-approximates bash (a bracket expression matches any one character, a
//! leading dot is matched like any other character): more names can only mean more to refuse.
//! It refuses, with a reason, what it cannot vouch for: a match or a pattern starting with
//! `-`, a pattern component starting with `.` (bash may match `..` with it), and patterns that
//! would list too much. It reads directories and decides nothing else.

use std::path::Path;

use super::analysis::ShellCommand;

/// Beyond this many directory entries listed (or names matched) the expansion is refused.
const MAX_ENTRIES: usize = 5000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// `*`
    Star,
    /// `?` or a bracket expression: any one character.
    One,
}

/// A pattern component as tokens, or None when it has no glob character.
fn tokens(component: &str) -> Result<Option<Vec<Tok>>, String> {
    let mut out = Vec::new();
    let mut globbed = false;
    let mut chars = component.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(Tok::Lit(chars.next().unwrap_or('\\'))),
            '*' => {
                globbed = true;
                out.push(Tok::Star);
            }
            '?' => {
                globbed = true;
                out.push(Tok::One);
            }
            '[' => {
                // A bracket expression up to its `]` (a `]` right after `[` or `[!` is a
                // member); without one, `[` is an ordinary character.
                let rest: String = chars.clone().collect();
                let skip = usize::from(rest.starts_with('!') || rest.starts_with('^'));
                let close = rest
                    .char_indices()
                    .skip(skip + 1)
                    .find(|&(_, c)| c == ']')
                    .map(|(i, _)| i);
                match close {
                    Some(end) => {
                        globbed = true;
                        out.push(Tok::One);
                        for _ in rest[..=end].chars() {
                            chars.next();
                        }
                    }
                    None => out.push(Tok::Lit('[')),
                }
            }
            c => out.push(Tok::Lit(c)),
        }
    }
    if globbed && out.first() == Some(&Tok::Lit('.')) {
        return Err(format!(
            "the pattern `{component}` may match `..`, a directory outside"
        ));
    }
    Ok(globbed.then_some(out))
}

fn matches(pat: &[Tok], name: &[char]) -> bool {
    match pat.split_first() {
        None => name.is_empty(),
        Some((Tok::Star, rest)) => (0..=name.len()).any(|i| matches(rest, &name[i..])),
        Some((Tok::One, rest)) => !name.is_empty() && matches(rest, &name[1..]),
        Some((Tok::Lit(c), rest)) => name.first() == Some(c) && matches(rest, &name[1..]),
    }
}

/// The names `pattern` may expand to in `dir` (relative to it unless the pattern is
/// absolute), in no particular order; empty when nothing matches.
pub fn matches_in(pattern: &str, dir: &Path) -> Result<Vec<String>, String> {
    let absolute = pattern.starts_with('/');
    let mut found: Vec<String> = vec![if absolute { "/".into() } else { String::new() }];
    let mut listed = 0;
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let sep = |prefix: &str| {
            if prefix.is_empty() || prefix.ends_with('/') {
                String::new()
            } else {
                "/".into()
            }
        };
        match tokens(part)? {
            None => {
                let lit = unescape(part);
                for f in &mut found {
                    *f = format!("{f}{}{lit}", sep(f));
                }
            }
            Some(toks) => {
                let mut next = Vec::new();
                for prefix in &found {
                    let Ok(entries) = std::fs::read_dir(dir.join(prefix)) else {
                        continue;
                    };
                    for e in entries.flatten() {
                        listed += 1;
                        if listed > MAX_ENTRIES {
                            return Err(format!("the pattern `{pattern}` lists too many files"));
                        }
                        let name = e.file_name().to_string_lossy().into_owned();
                        let chars: Vec<char> = name.chars().collect();
                        if matches(&toks, &chars) {
                            next.push(format!("{prefix}{}{name}", sep(prefix)));
                        }
                    }
                }
                if !last {
                    next.retain(|p| dir.join(p).is_dir());
                }
                found = next;
            }
        }
    }
    if pattern.ends_with('/') {
        for f in &mut found {
            f.push('/');
        }
    }
    Ok(found)
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' {
            chars.next().unwrap_or('\\')
        } else {
            c
        });
    }
    out
}

/// `cmd` as it would run in `dir`: each pattern word followed by every name it may match
/// (bash passes the pattern itself when nothing matches, so it is kept), all words literal.
pub fn expand(cmd: &ShellCommand, dir: &Path) -> Result<ShellCommand, String> {
    let mut words = Vec::new();
    let mut total = 0;
    for (i, w) in cmd.words.iter().enumerate() {
        words.push(w.clone());
        let Some((_, pattern)) = cmd.globs.iter().find(|(at, _)| *at == i) else {
            continue;
        };
        if w.starts_with('-') {
            return Err(format!("the pattern `{pattern}` is an option"));
        }
        let names = matches_in(pattern, dir)?;
        total += names.len();
        if total > MAX_ENTRIES {
            return Err(format!("the pattern `{pattern}` matches too many files"));
        }
        if let Some(n) = names.iter().find(|n| n.starts_with('-')) {
            return Err(format!(
                "the pattern `{pattern}` matches `{n}`, which the program would read as an option"
            ));
        }
        words.extend(names);
    }
    Ok(ShellCommand {
        words,
        literal: true,
        dir: cmd.dir.clone(),
        globs: Vec::new(),
        xargs: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        let toks = tokens(p).unwrap().unwrap();
        matches(&toks, &n.chars().collect::<Vec<_>>())
    }

    #[test]
    fn matching_over_approximates_bash() {
        assert!(m("*.rs", "main.rs") && m("*.rs", ".rs") && m("*", "-rf"));
        assert!(m("a?c", "abc") && !m("a?c", "ac"));
        assert!(m("[!x]y", "ay") && m("[]]z", "]z") && m("x[ab*", "x[abc"));
        assert!(!m("*.rs", "main.rsx"));
        assert!(tokens("plain").unwrap().is_none());
        assert!(tokens(".*").is_err() && tokens("\\.?").is_err());
    }

    #[test]
    fn expansion_lists_names_and_refuses_options() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("src/a.rs"), "").unwrap();
        std::fs::write(tmp.path().join("src/b.txt"), "").unwrap();
        let mut found = matches_in("src/*.rs", tmp.path()).unwrap();
        found.sort();
        assert_eq!(found, vec!["src/a.rs"]);
        assert!(matches_in("*/a.rs", tmp.path()).unwrap() == vec!["src/a.rs"]);
        assert!(matches_in("nope/*", tmp.path()).unwrap().is_empty());
        let cmd = crate::shell::analyze("cat src/*.rs").commands.remove(0);
        assert_eq!(cmd.globs, vec![(1, "src/*.rs".to_string())]);
        let run = expand(&cmd, tmp.path()).unwrap();
        assert_eq!(run.words, vec!["cat", "src/*.rs", "src/a.rs"]);
        // Under a directory a match cannot become an option.
        std::fs::write(tmp.path().join("src/-i.rs"), "").unwrap();
        assert_eq!(expand(&cmd, tmp.path()).unwrap().words.len(), 4);
        let cmd = crate::shell::analyze("sed -n 1p *").commands.remove(0);
        std::fs::write(tmp.path().join("-i"), "").unwrap();
        assert!(expand(&cmd, tmp.path()).unwrap_err().contains("`-i`"));
    }
}
