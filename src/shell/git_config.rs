//! Whether a repository's own configuration could make a "read-only" git command run
//! something. A repository is input from whoever made it: `core.fsmonitor` runs on
//! `git status`, `core.pager` and `diff.external` on `git log -p`, `filter.*` and
//! `diff.*.textconv` on diffs, `include.path` pulls in any of those. So before git may run
//! without asking, the repository found from the command's directory is read (its `.git` —
//! a directory, or a file pointing elsewhere — the shared `commondir`, `config` and
//! `config.worktree`) and every key must be on an allow-list of keys that only describe data.
//! Anything else — an unknown key, a file that cannot be read or parsed, submodules (whose
//! own configurations git would consult), `GIT_DIR` in the environment — fails closed: the
//! command is not read-only and the person is asked. The user's own `~/.gitconfig` and the
//! system configuration are theirs, not the repository's, and are not inspected.
//!
//! Configuration can also come through the environment the command gets (cairn's, with the
//! settings' `env` on top: [`super::env_policy::tool_var`]), and that is checked the same way:
//! `GIT_CONFIG_COUNT` with its `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_PARAMETERS`, and the files
//! `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM` and `GIT_CONFIG` name, read as `.git/config` is
//! read (cairn cannot tell such a file from one the repository planted). `GIT_EXEC_PATH` and
//! `GIT_EXTERNAL_DIFF`, which make even read-only git commands run programs, fail closed too.

use std::path::{Path, PathBuf};

/// Keys, per section without a subsection, that only describe data.
const PLAIN_KEYS: &[(&str, &[&str])] = &[
    (
        "core",
        &[
            "repositoryformatversion",
            "filemode",
            "bare",
            "logallrefupdates",
            "ignorecase",
            "precomposeunicode",
            "symlinks",
            "autocrlf",
            "eol",
            "safecrlf",
            "quotepath",
            "checkstat",
            "trustctime",
            "abbrev",
            "untrackedcache",
            "splitindex",
            "commitgraph",
            "multipackindex",
            "sparsecheckout",
            "sparsecheckoutcone",
            "compression",
            "loosecompression",
            "preloadindex",
            "fscache",
            "longpaths",
            "whitespace",
            "warnambiguousrefs",
        ],
    ),
    ("user", &["name", "email"]),
    (
        "extensions",
        &["objectformat", "worktreeconfig", "refstorage", "noop"],
    ),
    ("pull", &["rebase", "ff"]),
    ("push", &["default", "autosetupremote", "followtags"]),
    ("fetch", &["prune", "prunetags"]),
    ("merge", &["ff", "conflictstyle"]),
    ("rebase", &["autosquash", "autostash", "updaterefs"]),
    (
        "diff",
        &[
            "renames",
            "algorithm",
            "colormoved",
            "mnemonicprefix",
            "noprefix",
            "context",
            "interhunkcontext",
            "indentheuristic",
            "renamelimit",
            "statgraphwidth",
        ],
    ),
    ("log", &["date", "decorate", "follow", "abbrevcommit"]),
    (
        "status",
        &[
            "short",
            "branch",
            "showuntrackedfiles",
            "relativepaths",
            "aheadbehind",
            "renames",
        ],
    ),
    ("init", &["defaultbranch"]),
    ("i18n", &["commitencoding", "logoutputencoding"]),
    (
        "blame",
        &["date", "coloring", "showemail", "showroot", "blankboundary"],
    ),
    ("rerere", &["enabled", "autoupdate"]),
    ("index", &["version"]),
    ("gc", &["auto", "autodetach", "writecommitgraph"]),
    ("lfs", &["repositoryformatversion"]),
];

/// Keys of `section "name"` sections that only describe data.
const SUBSECTION_KEYS: &[(&str, &[&str])] = &[
    (
        "remote",
        &[
            "url",
            "pushurl",
            "fetch",
            "push",
            "tagopt",
            "prune",
            "prunetags",
            "mirror",
            "skipdefaultupdate",
            "skipfetchall",
        ],
    ),
    (
        "branch",
        &["remote", "pushremote", "merge", "rebase", "description"],
    ),
    ("lfs", &["access", "locksverify"]),
];

/// Sections whose every key is harmless (colours, GUI state, advice toggles).
const FREE_SECTIONS: &[&str] = &["color", "gui", "advice"];

/// Ok when git, run in `dir` with the environment `env` looks up (the command's, see
/// [`super::env_policy::tool_var`]), would find no configuration that can run anything: none
/// in the repository, none given through the environment.
pub fn check(dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"] {
        if env(var).is_some() {
            return Err(format!(
                "{var} is set, so the repository cannot be inspected"
            ));
        }
    }
    for var in ["GIT_EXEC_PATH", "GIT_EXTERNAL_DIFF"] {
        if env(var).is_some() {
            return Err(format!("{var} is set, and git would run programs it names"));
        }
    }
    check_env_config(dir, env)?;
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| format!("the directory {} cannot be resolved: {e}", dir.display()))?;
    let Some(repo) = discover(&dir)? else {
        return Ok(());
    };
    if let Some(top) = &repo.worktree
        && top.join(".gitmodules").exists()
    {
        return Err("the repository has submodules, whose configuration git would use".into());
    }
    let common = match read_optional(&repo.git_dir.join("commondir"))? {
        Some(text) => resolve(&repo.git_dir, text.trim()),
        None => repo.git_dir.clone(),
    };
    if common.join("modules").exists() {
        return Err("the repository has submodules, whose configuration git would use".into());
    }
    check_hooks(&common.join("hooks"))?;
    // git reads HEAD first: a FIFO there would hold the command until its time limit.
    read_optional(&repo.git_dir.join("HEAD"))?;
    let mut files = vec![common.join("config"), common.join("config.worktree")];
    if repo.git_dir != common {
        files.push(repo.git_dir.join("config.worktree"));
    }
    for file in files {
        if let Some(text) = read_optional(&file)? {
            inspect(&text).map_err(|why| format!("{} {why}", file.display()))?;
        }
    }
    Ok(())
}

/// The repository's own hooks: git runs some on "read-only" commands (`post-index-change`
/// when `git status` refreshes the index, `reference-transaction`), and a repository handed
/// over as a folder or archive carries them. A fresh clone has only `*.sample` files; anything
/// else (or a `hooks` that cannot be listed) fails closed.
fn check_hooks(hooks: &Path) -> Result<(), String> {
    let entries = match std::fs::read_dir(hooks) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{} cannot be listed: {e}", hooks.display())),
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("{} cannot be listed: {e}", hooks.display()))?;
        let name = entry.file_name();
        if !name.to_string_lossy().ends_with(".sample") {
            return Err(format!(
                "{} holds the hook `{}`, which git may run",
                hooks.display(),
                name.to_string_lossy()
            ));
        }
    }
    Ok(())
}

/// Most `GIT_CONFIG_COUNT` git is asked to read here; more fails closed.
const MAX_ENV_CONFIG: usize = 1000;

/// The configuration given through the environment: counted keys, `GIT_CONFIG_PARAMETERS`
/// (what `git -c` passes to its children) and the files named by `GIT_CONFIG_GLOBAL`,
/// `GIT_CONFIG_SYSTEM` and `GIT_CONFIG` (relative to `dir`, as git resolves them).
fn check_env_config(dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    if let Some(count) = env("GIT_CONFIG_COUNT") {
        let n: usize = count
            .trim()
            .parse()
            .ok()
            .filter(|n| *n <= MAX_ENV_CONFIG)
            .ok_or_else(|| {
                format!("GIT_CONFIG_COUNT is `{count}`, which git may read differently")
            })?;
        for i in 0..n {
            let var = format!("GIT_CONFIG_KEY_{i}");
            let key =
                env(&var).ok_or_else(|| format!("GIT_CONFIG_COUNT is {n} but {var} is not set"))?;
            check_key(&key).map_err(|why| format!("{var} {why}"))?;
        }
    }
    if let Some(params) = env("GIT_CONFIG_PARAMETERS") {
        for key in parameter_keys(&params).ok_or_else(|| {
            "GIT_CONFIG_PARAMETERS is not in the form git writes, so it cannot be inspected"
                .to_string()
        })? {
            check_key(&key).map_err(|why| format!("GIT_CONFIG_PARAMETERS {why}"))?;
        }
    }
    for var in ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"] {
        let Some(file) = env(var).filter(|f| !f.is_empty()) else {
            continue;
        };
        let path = resolve(dir, &file);
        if let Some(text) = read_optional(&path)? {
            inspect(&text).map_err(|why| format!("{} (named by {var}) {why}", path.display()))?;
        }
    }
    Ok(())
}

/// One `section[.subsection].key` against the allow-list.
fn check_key(full: &str) -> Result<(), String> {
    let (section, rest) = full
        .split_once('.')
        .ok_or_else(|| format!("names `{full}`, which is not a configuration key"))?;
    let (sub, key) = match rest.rsplit_once('.') {
        Some((sub, key)) => (Some(sub), key),
        None => (None, rest),
    };
    let (section, key) = (section.to_ascii_lowercase(), key.to_ascii_lowercase());
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(format!("names `{full}`, which git may read differently"));
    }
    if allowed(&section, sub, &key) {
        Ok(())
    } else {
        Err(format!(
            "sets `{full}`, which is not known to be harmless (git may run a program for such \
             settings)"
        ))
    }
}

/// The keys of `GIT_CONFIG_PARAMETERS`: single-quoted entries separated by spaces, each
/// `'key'='value'`, `'key=value'` or `'key'`, with `'` written as `'\''`. `None` when the text
/// is not in that form.
fn parameter_keys(text: &str) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (first, after) = sq_word(rest)?;
        rest = after;
        let key = if let Some(after_eq) = rest.strip_prefix('=') {
            let (_value, after) = sq_word(after_eq)?;
            rest = after;
            first
        } else {
            first.split('=').next().unwrap_or("").to_string()
        };
        keys.push(key);
        let trimmed = rest.trim_start();
        if trimmed.len() == rest.len() && !rest.is_empty() {
            return None; // entries are separated by spaces
        }
        rest = trimmed;
    }
    Some(keys)
}

/// One single-quoted word (`'a'\''b'` is `a'b`) and what follows it.
fn sq_word(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix("\\''") {
            Some(more) => {
                word.push('\'');
                rest = more;
            }
            None => return Some((word, rest)),
        }
    }
}

struct Repo {
    git_dir: PathBuf,
    worktree: Option<PathBuf>,
}

/// git's discovery: the nearest ancestor with a `.git` (directory or `gitdir:` file), or a
/// directory that is itself a git directory.
fn discover(start: &Path) -> Result<Option<Repo>, String> {
    for dir in start.ancestors() {
        let dotgit = dir.join(".git");
        if dotgit.is_dir() {
            return Ok(Some(Repo {
                git_dir: dotgit,
                worktree: Some(dir.to_path_buf()),
            }));
        }
        if dotgit.exists() {
            let text = read_optional(&dotgit)?.unwrap_or_default();
            let target = text
                .trim()
                .strip_prefix("gitdir:")
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or_else(|| format!("{} is not a `gitdir:` file", dotgit.display()))?;
            return Ok(Some(Repo {
                git_dir: resolve(dir, target),
                worktree: Some(dir.to_path_buf()),
            }));
        }
        if dir.join("HEAD").is_file() && dir.join("objects").is_dir() {
            return Ok(Some(Repo {
                git_dir: dir.to_path_buf(),
                worktree: None,
            }));
        }
    }
    Ok(None)
}

fn resolve(base: &Path, target: &str) -> PathBuf {
    let p = Path::new(target);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// A file's text, `None` when it does not exist; any other failure is an error.
fn read_optional(path: &Path) -> Result<Option<String>, String> {
    // A FIFO would block the permission check forever, a device never end; `/dev/null` (as
    // `GIT_CONFIG_GLOBAL` often names it) is empty.
    if path == Path::new("/dev/null") {
        return Ok(Some(String::new()));
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(format!("{} is not a regular file", path.display()));
    }
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("{} is not UTF-8", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{} cannot be read: {e}", path.display())),
    }
}

/// Check every key of one config file against the allow-list; unparsable lines fail.
fn inspect(text: &str) -> Result<(), String> {
    let mut section: Option<(String, Option<String>)> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        // Whether a trailing `\` continues the value depends on quotes and comments; rather
        // than reproduce git's reading, such a file is not trusted.
        if line.ends_with('\\') {
            return Err(format!(
                "line {}: a value continued on the next line",
                n + 1
            ));
        }
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let rest = if line.starts_with('[') {
            let (header, rest) = line
                .split_once(']')
                .ok_or_else(|| format!("line {}: a section header without `]`", n + 1))?;
            section = Some(parse_header(&header[1..]).ok_or_else(|| {
                format!("line {}: a section header git may read differently", n + 1)
            })?);
            rest.trim()
        } else {
            line
        };
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let key = rest
            .split(['=', ' ', '\t'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(format!("line {}: a line git may read differently", n + 1));
        }
        let Some((name, sub)) = &section else {
            return Err(format!("line {}: a key outside any section", n + 1));
        };
        if !allowed(name, sub.as_deref(), &key) {
            let full = match sub {
                Some(s) => format!("{name}.{s}.{key}"),
                None => format!("{name}.{key}"),
            };
            return Err(format!(
                "sets `{full}`, which is not known to be harmless (git may run a program for \
                 such settings)"
            ));
        }
    }
    Ok(())
}

/// `core`, `remote "origin"`, or the old `branch.main`; names are case-insensitive.
fn parse_header(h: &str) -> Option<(String, Option<String>)> {
    let h = h.trim();
    if let Some((name, quoted)) = h.split_once(char::is_whitespace) {
        let sub = quoted.trim().strip_prefix('"')?.strip_suffix('"')?;
        if sub.contains(['"', '\\']) {
            return None;
        }
        return Some((name.to_ascii_lowercase(), Some(sub.to_string())));
    }
    match h.split_once('.') {
        Some((name, sub)) => Some((name.to_ascii_lowercase(), Some(sub.to_ascii_lowercase()))),
        None => Some((h.to_ascii_lowercase(), None)),
    }
}

fn allowed(section: &str, sub: Option<&str>, key: &str) -> bool {
    if FREE_SECTIONS.contains(&section) {
        return true;
    }
    let table = if sub.is_some() {
        SUBSECTION_KEYS
    } else {
        PLAIN_KEYS
    };
    table
        .iter()
        .any(|(s, keys)| *s == section && keys.contains(&key))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLONED: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\
        \tbare = false\n\tlogallrefupdates = true\n[remote \"origin\"]\n\
        \turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
        [branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";

    #[test]
    fn a_fresh_clone_is_inert() {
        assert_eq!(inspect(CLONED), Ok(()));
        assert_eq!(inspect("[color \"diff\"]\n meta = yellow bold\n"), Ok(()));
    }

    #[test]
    fn keys_that_run_programs_are_refused() {
        for hostile in [
            "[core]\n\tfsmonitor = touch /tmp/x\n",
            "[core]\n\tpager = sh -c evil\n",
            "[CORE]\n\tPager = evil\n",
            "[diff]\n\texternal = evil\n",
            "[diff \"x\"]\n\ttextconv = evil\n",
            "[filter \"lfs\"]\n\tclean = evil\n",
            "[include]\n\tpath = other\n",
            "[includeIf \"gitdir:/\"]\n\tpath = other\n",
            "[alias]\n\tst = !evil\n",
            "[core]\n\thooksPath = hooks\n",
            "[core.x]\n\tsshcommand = evil\n",
            "[remote \"o\"]\n\tuploadpack = evil\n",
            "[core] fsmonitor = evil\n",
            "fsmonitor = evil\n",
            "[core\n",
            "[core \"a\\\"b\"]\n x = 1\n",
        ] {
            assert!(inspect(hostile).is_err(), "{hostile}");
        }
        // A continued value could hide a key: refused.
        assert!(inspect("[user]\n name = a ; \\\npager = b\n").is_err());
    }

    #[test]
    fn a_repository_with_its_own_hooks_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(dir.path().join(".git/config"), CLONED).unwrap();
        std::fs::write(hooks.join("pre-commit.sample"), "#!/bin/sh\n").unwrap();
        let no_env = |_: &str| None;
        assert_eq!(check(dir.path(), &no_env), Ok(()));
        // `git status` runs this one when it refreshes the index.
        std::fs::write(hooks.join("post-index-change"), "#!/bin/sh\ntouch pwned\n").unwrap();
        let err = check(dir.path(), &no_env).unwrap_err();
        assert!(err.contains("post-index-change"), "{err}");
    }

    #[test]
    fn a_config_that_is_a_fifo_fails_closed_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join(".git/config"))
            .status();
        assert!(made.unwrap().success());
        let err = check(dir.path(), &|_: &str| None).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_file(dir.path().join(".git/config")).unwrap();
        assert_eq!(check(dir.path(), &|_: &str| None), Ok(()));
        std::fs::remove_file(dir.path().join(".git/HEAD")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join(".git/HEAD"))
            .status();
        assert!(made.unwrap().success());
        let err = check(dir.path(), &|_: &str| None).unwrap_err();
        assert!(err.contains("HEAD is not a regular file"), "{err}");
    }

    /// An environment of exactly these variables.
    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn config_given_through_the_environment_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let check_env = |vars: &[(&str, &str)]| check(d, &env_of(vars));
        assert_eq!(check_env(&[]), Ok(()));
        // Counted keys.
        assert_eq!(
            check_env(&[
                ("GIT_CONFIG_COUNT", "1"),
                ("GIT_CONFIG_KEY_0", "color.ui"),
                ("GIT_CONFIG_VALUE_0", "never")
            ]),
            Ok(())
        );
        assert_eq!(
            check_env(&[
                ("GIT_CONFIG_COUNT", "2"),
                ("GIT_CONFIG_KEY_0", "user.name"),
                ("GIT_CONFIG_KEY_1", "core.fsmonitor"),
                ("GIT_CONFIG_VALUE_1", "touch x")
            ]),
            Err(
                "GIT_CONFIG_KEY_1 sets `core.fsmonitor`, which is not known to be harmless \
                 (git may run a program for such settings)"
                    .into()
            )
        );
        assert!(check_env(&[("GIT_CONFIG_COUNT", "x")]).is_err());
        assert!(check_env(&[("GIT_CONFIG_COUNT", "1")]).is_err());
        assert!(
            check_env(&[
                ("GIT_CONFIG_COUNT", "1"),
                ("GIT_CONFIG_KEY_0", "diff.x.textconv")
            ])
            .is_err()
        );
        // What `git -c` hands its children.
        assert_eq!(
            check_env(&[(
                "GIT_CONFIG_PARAMETERS",
                "'color.ui'='never' 'user.name=a'\\''b'"
            )]),
            Ok(())
        );
        for hostile in [
            "'core.pager'='sh -c evil'",
            "'user.name'='x' 'core.fsmonitor=evil'",
            "'Core.FSMonitor'",
            "'core.pager",
            "core.pager=evil",
        ] {
            assert!(
                check_env(&[("GIT_CONFIG_PARAMETERS", hostile)]).is_err(),
                "{hostile}"
            );
        }
        // Files named by the environment, relative to the command's directory.
        std::fs::write(d.join("inert"), "[user]\n name = x\n").unwrap();
        std::fs::write(d.join("hostile"), "[core]\n fsmonitor = touch x\n").unwrap();
        for var in ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"] {
            assert_eq!(check_env(&[(var, "inert")]), Ok(()));
            assert_eq!(check_env(&[(var, "/dev/null")]), Ok(()));
            assert_eq!(check_env(&[(var, "missing")]), Ok(()));
            let err = check_env(&[(var, "hostile")]).unwrap_err();
            assert!(
                err.ends_with(&format!(
                    "hostile (named by {var}) sets `core.fsmonitor`, which is \
                     not known to be harmless (git may run a program for such settings)"
                )),
                "{err}"
            );
        }
        for var in ["GIT_DIR", "GIT_EXEC_PATH", "GIT_EXTERNAL_DIFF"] {
            assert!(check_env(&[(var, "x")]).is_err(), "{var}");
        }
    }

    #[test]
    fn parameter_keys_follow_gits_quoting() {
        assert_eq!(
            parameter_keys("'a.b'='1' 'c.d=2' 'e.f'"),
            Some(vec!["a.b".into(), "c.d".into(), "e.f".into()])
        );
        assert_eq!(parameter_keys("'a.'\\''b'='x'"), Some(vec!["a.'b".into()]));
        assert_eq!(parameter_keys("'a.b''c.d'"), None);
        assert_eq!(parameter_keys("a.b"), None);
    }
}
