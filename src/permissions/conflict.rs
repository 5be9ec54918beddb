//! Outside changes that cannot be merged, in one place: the request a call puts to the person
//! when a file it would write changed on disk since the session read it and the call's change
//! cannot be merged with that change, and what each answer means — overwrite (the call runs and
//! writes its version), re-read (the call runs and writes nothing: the model gets the file as it
//! is now), or abort (anything else: a denial, nothing written).

use std::path::Path;

use super::{CallInfo, DecisionEffect, request_to_person};
use crate::protocol::{CallOutcome, Decision, Display, PermissionRequest, RequestKind};

/// The request for `call`, whose change to `path` conflicts with an outside change: `disk` is
/// the file as it is now and `ours` what the call would write, so the diff's removed lines are
/// what overwriting loses.
pub fn request(call: &CallInfo<'_>, path: &Path, disk: &str, ours: &str) -> PermissionRequest {
    let reason = "the file changed on disk since the session read it, and this edit cannot be merged \
                  with that change: overwriting loses the lines marked -";
    let preview = Display::Diff {
        path: path.to_path_buf(),
        before: disk.to_string(),
        after: ours.to_string(),
    };
    let kind = RequestKind::Conflict {
        path: path.to_path_buf(),
    };
    request_to_person(call, reason, Some(preview), kind)
}

/// The result the model gets when the person aborts a conflicting change to `path`.
pub fn aborted_message(path: &Path) -> String {
    format!(
        "The user aborted this edit: {} was changed outside cairn since you read it, and your \
         edit conflicts with that change. Nothing was written. STOP what you are doing and wait \
         for the user to tell you how to proceed.",
        path.display()
    )
}

/// What the person's answer to a conflict request means; `None` for any other request.
pub(super) fn answer(request: &PermissionRequest, decision: &Decision) -> Option<DecisionEffect> {
    let RequestKind::Conflict { path } = &request.kind else {
        return None;
    };
    let effect = |allow, outcome, message| DecisionEffect {
        allow,
        outcome,
        message,
        new_mode: None,
    };
    Some(match decision {
        // Both run the call once: it writes (overwrite) or reports the file as it is (re-read).
        Decision::Overwrite | Decision::Reread => effect(true, CallOutcome::AllowedOnce, None),
        Decision::DenyWithFeedback { feedback } => effect(
            false,
            CallOutcome::Denied,
            Some(format!(
                "{}\nThe user said:\n{feedback}",
                aborted_message(path).trim_end()
            )),
        ),
        _ => effect(false, CallOutcome::Denied, Some(aborted_message(path))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict_request() -> PermissionRequest {
        PermissionRequest {
            id: 1,
            call_id: "c".into(),
            tool: "Edit".into(),
            title: "Edit f.txt".into(),
            input: serde_json::Value::Null,
            reason: String::new(),
            preview: None,
            session_scope: None,
            saveable_rule: None,
            background_task: None,
            kind: RequestKind::Conflict {
                path: "/p/f.txt".into(),
            },
        }
    }

    #[test]
    fn overwrite_and_reread_run_the_call_and_anything_else_aborts() {
        let req = conflict_request();
        for d in [Decision::Overwrite, Decision::Reread] {
            assert!(answer(&req, &d).is_some_and(|e| e.allow));
        }
        for d in [
            Decision::AllowOnce,
            Decision::AllowSession,
            Decision::DenyOnce,
        ] {
            let e = answer(&req, &d).unwrap();
            assert!(!e.allow);
            assert_eq!(
                e.message.as_deref(),
                Some(aborted_message("/p/f.txt".as_ref()).as_str())
            );
        }
        let mut other = req.clone();
        other.kind = RequestKind::Tool;
        assert!(answer(&other, &Decision::Overwrite).is_none());
    }
}
