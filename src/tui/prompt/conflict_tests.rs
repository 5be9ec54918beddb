//! A change that conflicts with an outside change: the panel shows what overwriting does to the
//! file as it is now (the outside change's lines marked -, lost), offers overwrite / re-read /
//! abort by number, Esc aborts, and the hunk and editor keys do nothing.

use std::path::PathBuf;

use serde_json::json;

use super::snapshot_tests::{asking, screen, tool_request};
use super::tests::decision;
use crate::protocol::{Decision, Display, PermissionRequest, RequestKind};
use crate::tui::input::Key;

const DISK: &str = "fn main() {\n    let port = 8080; // set by ops\n    serve(port);\n}\n";
const OURS: &str = "fn main() {\n    let port = config::port();\n    serve(port);\n}\n";

fn conflict_request() -> PermissionRequest {
    let path = PathBuf::from("/work/project/src/main.rs");
    let mut req = tool_request(
        "Edit",
        "Edit src/main.rs",
        json!({"file_path": "src/main.rs", "old_string": "let port = 80;",
               "new_string": "let port = config::port();"}),
    );
    req.reason = "the file changed on disk since the session read it, and this edit cannot be \
                  merged with that change: overwriting loses the lines marked -"
        .into();
    req.kind = RequestKind::Conflict { path: path.clone() };
    req.preview = Some(Display::Diff {
        path,
        before: DISK.into(),
        after: OURS.into(),
    });
    req
}

#[test]
fn the_panel_shows_the_lines_overwriting_loses_and_three_choices() {
    let mut h = asking(conflict_request());
    insta::assert_snapshot!(screen(&mut h, 100, 30));
}

#[test]
fn the_numbers_pick_overwrite_and_reread() {
    let mut h = asking(conflict_request());
    h.press(Key::Char('1'));
    assert_eq!(decision(&mut h), [Decision::Overwrite]);
    let mut h = asking(conflict_request());
    h.press(Key::Char('2'));
    assert_eq!(decision(&mut h), [Decision::Reread]);
}

#[test]
fn enter_at_once_rereads_rather_than_overwrite() {
    let mut h = asking(conflict_request());
    h.press(Key::Enter);
    assert_eq!(decision(&mut h), [Decision::Reread]);
}

#[test]
fn three_and_esc_abort() {
    for key in [Key::Char('3'), Key::Esc] {
        let mut h = asking(conflict_request());
        h.press(key);
        assert_eq!(decision(&mut h), [Decision::DenyOnce]);
    }
}

#[test]
fn no_letter_overwrites_and_the_hunks_cannot_be_trimmed() {
    let mut h = asking(conflict_request());
    // `y` (yes) and `a` (session) are not offered; Space would reject the hunk.
    for c in ['y', 'a', ' ', 'R', 'e'] {
        h.press(Key::Char(c));
    }
    assert_eq!(decision(&mut h), []);
    h.press(Key::Char('1'));
    assert_eq!(decision(&mut h), [Decision::Overwrite]);
}
