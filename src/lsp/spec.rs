//! Which server answers for a file: the servers the settings declare (`lspServers`, any layer
//! the folder's trust lets through) and the built-in defaults, each used only when its program
//! is found on PATH. A declared server wins over a default for the extensions it names. No I/O
//! here beyond looking programs up on PATH, once, when the list is built.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::config::lsp_servers::LspServerSetting;

/// How long `initialize` may take when the configuration does not say.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// One server cairn may start: what to run and which files it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    /// The program, resolved on PATH.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// `.py` -> `python`.
    pub extension_to_language: BTreeMap<String, String>,
    pub env: BTreeMap<String, String>,
    pub initialization_options: Option<Value>,
    pub settings: Option<Value>,
    pub startup_timeout: Duration,
}

impl ServerSpec {
    /// The LSP language id of `path`, when this server covers it.
    pub fn language_of(&self, path: &Path) -> Option<&str> {
        self.extension_to_language
            .get(&extension(path)?)
            .map(String::as_str)
    }
}

/// `.py` for `a/b.py` (lower-cased, with its dot).
pub fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| format!(".{}", e.to_string_lossy().to_lowercase()))
}

/// A built-in server: name, program, args, and extensions with their language.
type Builtin = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// The built-in servers.
const DEFAULTS: &[Builtin] = &[
    (
        "pyright",
        "pyright-langserver",
        &["--stdio"],
        &[(".py", "python"), (".pyi", "python")],
    ),
    (
        "pylsp",
        "pylsp",
        &[],
        &[(".py", "python"), (".pyi", "python")],
    ),
    (
        "typescript",
        "typescript-language-server",
        &["--stdio"],
        &[
            (".ts", "typescript"),
            (".tsx", "typescriptreact"),
            (".mts", "typescript"),
            (".cts", "typescript"),
            (".js", "javascript"),
            (".jsx", "javascriptreact"),
            (".mjs", "javascript"),
            (".cjs", "javascript"),
        ],
    ),
    (
        "clangd",
        "clangd",
        &[],
        &[
            (".c", "c"),
            (".h", "c"),
            (".cc", "cpp"),
            (".cpp", "cpp"),
            (".cxx", "cpp"),
            (".hpp", "cpp"),
            (".hh", "cpp"),
        ],
    ),
    ("rust-analyzer", "rust-analyzer", &[], &[(".rs", "rust")]),
    ("gopls", "gopls", &[], &[(".go", "go")]),
];

/// The servers for a session: the declared ones (highest layer first) whose program is found,
/// then the defaults found on `path_var`; each runs with `env` (the settings' `env`) added. `problems` gets a line for each declared server
/// whose program is not found.
pub fn resolve(
    declared: &[LspServerSetting],
    path_var: Option<&str>,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> (Vec<ServerSpec>, Vec<String>) {
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    for d in declared {
        match find_program(&d.command, path_var, cwd) {
            Some(program) => specs.push(ServerSpec {
                name: d.name.clone(),
                program,
                args: d.args.clone(),
                extension_to_language: d.extension_to_language.clone(),
                // The settings' `env` first, the server's own over it.
                env: env
                    .iter()
                    .chain(&d.env)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                initialization_options: d.initialization_options.clone(),
                settings: d.settings.clone(),
                startup_timeout: d
                    .startup_timeout_ms
                    .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis),
            }),
            None => problems.push(format!(
                "language server `{}` ({}): `{}` was not found on PATH",
                d.name, d.source, d.command
            )),
        }
    }
    for (name, program, args, exts) in DEFAULTS {
        let Some(found) = find_program(program, path_var, cwd) else {
            continue;
        };
        specs.push(ServerSpec {
            name: (*name).to_string(),
            program: found,
            args: args.iter().map(|a| a.to_string()).collect(),
            extension_to_language: exts
                .iter()
                .map(|(e, l)| (e.to_string(), l.to_string()))
                .collect(),
            env: env.clone(),
            initialization_options: builtin_options(name),
            settings: None,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
        });
    }
    (specs, problems)
}

/// What a built-in server is initialised with. typescript-language-server otherwise answers
/// from tsserver's syntax-only server while the project loads (a definition is then the
/// import line): with the syntax server off, answers wait for the project.
fn builtin_options(name: &str) -> Option<Value> {
    (name == "typescript").then(|| serde_json::json!({"tsserver": {"useSyntaxServer": "never"}}))
}

/// `command` as a path: relative paths from `cwd`, bare names on `path_var`.
fn find_program(command: &str, path_var: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    if command.contains('/') {
        let p = cwd.join(command);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The error for a file no server covers: names the type and says how to configure one.
pub fn no_server_message(path: &Path) -> String {
    let kind = extension(path).unwrap_or_else(|| "(no extension)".into());
    format!(
        "No language server is configured for {kind} files ({}). Install one of the built-in \
         servers on PATH (pyright-langserver, pylsp, typescript-language-server, clangd, \
         rust-analyzer, gopls), or declare one in settings: \"lspServers\": {{\"name\": \
         {{\"command\": \"...\", \"args\": [...], \"extensionToLanguage\": {{\"{kind}\": \
         \"language-id\"}}}}}}. Use Grep and Read for this file meanwhile.",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exe(dir: &Path, name: &str) {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn declared_servers_come_first_and_defaults_only_when_on_path() {
        let dir = tempfile::tempdir().unwrap();
        exe(dir.path(), "clangd");
        exe(dir.path(), "my-ls");
        let declared = vec![
            LspServerSetting {
                name: "mine".into(),
                command: "my-ls".into(),
                args: vec!["--stdio".into()],
                extension_to_language: [(".c".to_string(), "c".to_string())].into(),
                env: BTreeMap::new(),
                initialization_options: None,
                settings: None,
                startup_timeout_ms: Some(500),
                source: "s.json".into(),
            },
            LspServerSetting {
                name: "gone".into(),
                command: "not-there".into(),
                args: vec![],
                extension_to_language: [(".x".to_string(), "x".to_string())].into(),
                env: BTreeMap::new(),
                initialization_options: None,
                settings: None,
                startup_timeout_ms: None,
                source: "s.json".into(),
            },
        ];
        let path = dir.path().to_string_lossy().into_owned();
        let (specs, problems) = resolve(&declared, Some(&path), dir.path(), &BTreeMap::new());
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["mine", "clangd"]);
        assert_eq!(specs[0].startup_timeout, Duration::from_millis(500));
        assert_eq!(
            problems,
            ["language server `gone` (s.json): `not-there` was not found on PATH"]
        );
        assert_eq!(specs[1].language_of(Path::new("/a/b.H")), Some("c"));
        assert_eq!(specs[1].language_of(Path::new("/a/b.py")), None);
    }
}
