//! Per-conversation working roots. The gate is shared by the session and its sub-agents, and
//! most conversations work where the session does: in the project directory and the
//! additional ones. A sub-agent run with `isolation: worktree` works in its own git worktree of
//! the project instead, and for its calls the gate judges paths against that copy
//! ([`ConversationRoots::isolated`]):
//! - "inside the working directories" (acceptEdits, read-only allowances, a skill's grants)
//!   means inside the worktree (or an additional directory), not the project;
//! - protected paths are named below the worktree's root, so `<worktree>/.claude/settings.json`
//!   is protected and `<worktree>/src/a.rs` is not, although the worktree itself lies under
//!   the project's `.claude/worktrees/`;
//! - rules written for the project (`Edit(src/**)`, `Read(/secrets/**)`) speak about the copy:
//!   a path in the worktree is matched as the project's path it stands for (and, for deny and
//!   ask rules, as itself too);
//! - the real project tree is outside: writing there is *shadowed* — asked about (or refused
//!   headless) unless the person granted that very path for the session, whatever the
//!   project's allow rules say about the project's paths.
//!
//! The gate keeps the roots of the conversations that have their own, by conversation id
//! (set when the sub-agent starts, forgotten when it ends); every other conversation is judged
//! as the session's ([`ConversationRoots::main`]), exactly as before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::safety::{PathFacts, Roots};
use super::{PermissionGate, lock};

/// The conversations with roots of their own, by id (shared by the gate and its read guards).
pub type RootsByConversation = Arc<Mutex<HashMap<String, Arc<ConversationRoots>>>>;

/// Where one conversation works, as the gate judges its paths.
#[derive(Debug, Clone)]
pub struct ConversationRoots {
    /// Inside these a path is "inside the working directories"; protected names are looked
    /// for below the one holding a path.
    pub working: Roots,
    /// The directory rules and reasons are written relative to (the project directory, or
    /// the conversation's worktree).
    pub root: PathBuf,
    /// For a conversation in its own copy of the project: the copy and the project.
    copy: Option<Copy>,
}

#[derive(Debug, Clone)]
struct Copy {
    /// The copy's root, as given and canonicalised.
    tree: Roots,
    /// The project directory rules are anchored to.
    project: PathBuf,
    /// The project directory, as given and canonicalised.
    project_roots: Roots,
}

impl ConversationRoots {
    /// The session's own roots: `working` (project and additional directories), relative to
    /// `project_dir`.
    pub fn main(working: Roots, project_dir: &Path) -> ConversationRoots {
        ConversationRoots {
            working,
            root: project_dir.to_path_buf(),
            copy: None,
        }
    }

    /// The roots of a conversation working in `tree`, a copy of `project` (its worktree),
    /// with the session's `additional` directories beside it.
    pub fn isolated(tree: &Path, project: &Path, additional: &[PathBuf]) -> ConversationRoots {
        let mut dirs = vec![tree.to_path_buf()];
        dirs.extend(additional.iter().cloned());
        ConversationRoots {
            working: Roots::new(&dirs),
            root: tree.to_path_buf(),
            copy: Some(Copy {
                tree: Roots::new(&[tree.to_path_buf()]),
                project: project.to_path_buf(),
                project_roots: Roots::new(&[project.to_path_buf()]),
            }),
        }
    }

    /// Whether this conversation works in a copy of the project.
    pub fn is_isolated(&self) -> bool {
        self.copy.is_some()
    }

    /// `facts` (found against [`Self::working`]) as this conversation's rules see them: each
    /// candidate inside the copy becomes the project's path it stands for, and a path of the
    /// real project outside the copy (and outside every working directory) is shadowed.
    pub fn apply(&self, mut facts: PathFacts) -> PathFacts {
        let Some(copy) = &self.copy else {
            return facts;
        };
        facts.rule_candidates = facts
            .candidates
            .iter()
            .map(|c| {
                copy.tree
                    .containing(c)
                    .and_then(|root| c.strip_prefix(root).ok())
                    .map_or_else(|| c.clone(), |rel| copy.project.join(rel))
            })
            .collect();
        facts.shadowed = !facts.inside
            && facts.candidates.iter().any(|c| {
                copy.project_roots.containing(c).is_some() && copy.tree.containing(c).is_none()
            });
        facts
    }
}

impl PermissionGate {
    /// Decide `conversation`'s calls as working in `tree`, its own worktree of the project
    /// (an isolated sub-agent; its nested agents get the same): see the module docs.
    pub fn set_conversation_root(&self, conversation: &str, tree: &Path) {
        let roots = ConversationRoots::isolated(tree, &self.project_dir, &self.additional_dirs);
        lock(&self.conversation_roots).insert(conversation.to_string(), Arc::new(roots));
    }

    /// The worktree `conversation` works in, when it has its own.
    pub fn conversation_root(&self, conversation: &str) -> Option<PathBuf> {
        lock(&self.conversation_roots)
            .get(conversation)
            .map(|r| r.root.clone())
    }

    /// Forget what was set for `conversation` (its run ended): its roots and its mode.
    pub fn forget_conversation(&self, conversation: &str) {
        lock(&self.conversation_roots).remove(conversation);
        lock(&self.conversation_modes).remove(conversation);
    }

    /// The roots `conversation`'s calls are judged against.
    pub(super) fn roots_for(&self, conversation: &str) -> Arc<ConversationRoots> {
        lock(&self.conversation_roots)
            .get(conversation)
            .cloned()
            .unwrap_or_else(|| Arc::clone(&self.main_roots))
    }
}

#[cfg(test)]
mod tests {
    use super::super::safety::path_facts;
    use super::*;

    fn facts(roots: &ConversationRoots, p: &Path) -> PathFacts {
        roots.apply(path_facts(p, &roots.working, &Roots::default()).unwrap())
    }

    #[test]
    fn a_copy_is_its_own_root_and_the_project_is_outside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("proj");
        let tree = project.join(".claude/worktrees/a-1");
        std::fs::create_dir_all(tree.join("src")).unwrap();
        let extra = tmp.path().join("extra");
        std::fs::create_dir_all(&extra).unwrap();
        let roots = ConversationRoots::isolated(&tree, &project, std::slice::from_ref(&extra));
        assert!(roots.is_isolated());
        let src = facts(&roots, &tree.join("src/a.rs"));
        assert!(src.inside && !src.protected && !src.shadowed, "{src:?}");
        assert!(src.rule_candidates.contains(&project.join("src/a.rs")));
        assert!(!src.rule_candidates.contains(&tree.join("src/a.rs")));
        let blocking: Vec<_> = src.blocking_candidates().collect();
        assert!(blocking.contains(&&tree.join("src/a.rs")));
        assert!(blocking.contains(&&project.join("src/a.rs")));
        let settings = facts(&roots, &tree.join(".claude/settings.json"));
        assert!(settings.inside && settings.protected, "{settings:?}");
        let real = facts(&roots, &project.join("src/a.rs"));
        assert!(!real.inside && real.shadowed, "{real:?}");
        assert_eq!(real.rule_candidates, real.candidates);
        let beside = facts(&roots, &extra.join("b.txt"));
        assert!(beside.inside && !beside.shadowed, "{beside:?}");
        let elsewhere = facts(&roots, &tmp.path().join("other.txt"));
        assert!(!elsewhere.inside && !elsewhere.shadowed, "{elsewhere:?}");
    }

    #[test]
    fn the_sessions_roots_change_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().to_path_buf();
        let roots = ConversationRoots::main(Roots::new(std::slice::from_ref(&project)), &project);
        assert!(!roots.is_isolated());
        let p = project.join(".claude/worktrees/a-1/src/a.rs");
        let f = facts(&roots, &p);
        assert!(f.inside && f.protected && !f.shadowed, "{f:?}");
        assert_eq!(f.rule_candidates, f.candidates);
    }
}
