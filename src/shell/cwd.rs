//! The working directory through a compound command, as far as it can be known before running.
//!
//! A redirection or a path argument is resolved against the directory the shell is in when it
//! runs, which a `cd` earlier in the same line may have changed (`cd .git/hooks && echo … >
//! pre-commit`). [`Cwd`] follows `cd`, `pushd`, `popd` and `cd -` as the walk meets them; a
//! subshell restores what it had. Any `cd` may fail (a missing directory) and the line may go
//! on (`;`, `||`), so after a `cd` the directory is either the old or the new one: [`Dirs`]
//! holds every possibility, each as a path relative to the starting directory (`""`), or
//! absolute, or from `~`. A target that cannot be known before running (a variable, a glob,
//! `~user`, `cd -` with no earlier `cd`, a `cd` in a loop, too many possibilities) makes it
//! [`Dirs::Unknown`], and the gate asks. Pure: nothing here touches the disk.

/// Beyond this many possible directories the walk stops tracking.
const MAX_DIRS: usize = 16;

/// Where a command may run, relative to the directory the line starts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dirs {
    /// Every possibility: `""` is the starting directory; others are joined `cd` targets
    /// (`sub`, `sub/../x`, `/abs`, `~`, `~/x`), `..` kept for the resolver.
    Known(Vec<String>),
    /// Why the directory cannot be known.
    Unknown(String),
}

impl Default for Dirs {
    fn default() -> Dirs {
        Dirs::Known(vec![String::new()])
    }
}

impl Dirs {
    fn union(&self, other: &Dirs) -> Dirs {
        match (self, other) {
            (Dirs::Unknown(w), _) | (_, Dirs::Unknown(w)) => Dirs::Unknown(w.clone()),
            (Dirs::Known(a), Dirs::Known(b)) => {
                let mut all = a.clone();
                for d in b {
                    if !all.contains(d) {
                        all.push(d.clone());
                    }
                }
                if all.len() > MAX_DIRS {
                    Dirs::Unknown("too many `cd`s to follow".into())
                } else {
                    Dirs::Known(all)
                }
            }
        }
    }

    fn join(&self, target: &str) -> Dirs {
        match self {
            Dirs::Unknown(w) => Dirs::Unknown(w.clone()),
            Dirs::Known(ds) => Dirs::Known(ds.iter().map(|d| join(d, target)).collect()),
        }
    }
}

fn join(dir: &str, target: &str) -> String {
    if dir.is_empty() || target.starts_with('/') || target == "~" || target.starts_with("~/") {
        target.to_string()
    } else {
        format!("{}/{target}", dir.trim_end_matches('/'))
    }
}

/// The directory state of the walk: now, before the last `cd` (`cd -`), and the `pushd` stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cwd {
    pub now: Dirs,
    prev: Option<Dirs>,
    stack: Vec<Dirs>,
}

impl Cwd {
    pub fn unknown(&mut self, why: impl Into<String>) {
        self.now = Dirs::Unknown(why.into());
    }

    /// Apply a `cd`, `pushd` or `popd` (its words after wrapper stripping, with whether each
    /// is a literal). Other commands leave the state alone.
    pub fn apply(&mut self, words: &[(String, bool)]) {
        let Some((name, _)) = words.first() else {
            return;
        };
        let name = super::words::program_of(name);
        let args = &words[1..];
        let before = self.now.clone();
        match name {
            "cd" => {
                let Some(target) = self.cd_target(args) else {
                    return;
                };
                let after = match target {
                    Target::Dir(t) => before.join(&t),
                    Target::Previous => match &self.prev {
                        Some(p) => p.clone(),
                        None => Dirs::Unknown("`cd -` to a directory set before cairn".into()),
                    },
                };
                self.now = before.union(&after);
                self.prev = Some(before);
            }
            "pushd" => match args {
                [(t, true)] if !t.starts_with(['-', '+']) && plain_target(t) => {
                    self.now = before.union(&before.join(t));
                    self.stack.push(before.clone());
                    self.prev = Some(before);
                }
                _ => self.unknown("a `pushd` that cannot be followed"),
            },
            "popd" => match (args.is_empty(), self.stack.pop()) {
                (true, Some(top)) => {
                    self.now = before.union(&top);
                    self.prev = Some(before);
                }
                _ => self.unknown("a `popd` that cannot be followed"),
            },
            // They can change what `cd` does or run code that changes directory.
            "shopt" | "source" | "." | "enable" | "trap" => {
                self.unknown(format!("`{name}` may change how `cd` behaves"))
            }
            _ => {}
        }
    }

    /// The operand of `cd` after its options; `None` after marking the state unknown.
    fn cd_target(&mut self, args: &[(String, bool)]) -> Option<Target> {
        let mut rest = args;
        while let Some(((w, _), tail)) = rest.split_first() {
            if w == "--" {
                rest = tail;
                break;
            }
            if w.len() > 1 && w.starts_with('-') && w[1..].chars().all(|c| "LPe@".contains(c)) {
                rest = tail;
            } else {
                break;
            }
        }
        match rest {
            [] => Some(Target::Dir("~".into())),
            [(t, _)] if t == "-" => Some(Target::Previous),
            [(t, true)] if plain_target(t) => Some(Target::Dir(t.clone())),
            _ => {
                self.unknown("a `cd` whose target is only known when it runs");
                None
            }
        }
    }
}

enum Target {
    Dir(String),
    Previous,
}

/// A target the resolver can follow: not `~user`, not empty.
fn plain_target(t: &str) -> bool {
    !t.is_empty() && (!t.starts_with('~') || t == "~" || t.starts_with("~/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cmds: &[&[&str]]) -> Dirs {
        let mut cwd = Cwd::default();
        for c in cmds {
            let words: Vec<(String, bool)> = c.iter().map(|w| (w.to_string(), true)).collect();
            cwd.apply(&words);
        }
        cwd.now
    }

    fn known(ds: &[&str]) -> Dirs {
        Dirs::Known(ds.iter().map(|d| d.to_string()).collect())
    }

    #[test]
    fn follows_cd_pushd_popd() {
        assert_eq!(run(&[&["cd", ".git/hooks"]]), known(&["", ".git/hooks"]));
        assert_eq!(run(&[&["cd", "a"], &["cd", "../b"]]).clone(), {
            known(&["", "a", "../b", "a/../b"])
        });
        assert_eq!(run(&[&["cd"]]), known(&["", "~"]));
        assert_eq!(run(&[&["cd", "-P", "/x"]]), known(&["", "/x"]));
        assert_eq!(run(&[&["cd", "a"], &["cd", "-"]]), known(&["", "a"]));
        assert_eq!(
            run(&[&["pushd", "a"], &["popd"]]),
            known(&["", "a"]),
            "popd may leave us anywhere we were"
        );
        for unknown in [
            &[&["cd", "-"][..]][..],
            &[&["cd", "~root"]],
            &[&["popd"]],
            &[&["pushd"]],
            &[&["cd", "a", "b"]],
            &[&["shopt", "-s", "cdable_vars"]],
        ] {
            assert!(matches!(run(unknown), Dirs::Unknown(_)), "{unknown:?}");
        }
        let mut cwd = Cwd::default();
        cwd.apply(&[("cd".into(), true), ("$D".into(), false)]);
        assert!(matches!(cwd.now, Dirs::Unknown(_)));
    }
}
