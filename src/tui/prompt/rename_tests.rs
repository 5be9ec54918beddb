//! A change to several files under review (an LSP rename): one prompt for the set, the file on
//! screen named among the others, the hunk keys walking across files, and an approval that
//! carries each file's approved content when the person trimmed any.

use std::path::PathBuf;

use serde_json::json;

use super::snapshot_tests::{asking, screen, tool_request};
use super::tests::decision;
use crate::protocol::{Decision, Display, EditedFile, FileTexts, PermissionRequest};
use crate::tui::input::Key;

const LIB: &str = "def greet(name):\n    return name\n\n\ndef main():\n    greet('x')\n";
const APP: &str = "from lib import greet\n\nprint(greet('you'))\n";

fn renamed(text: &str) -> String {
    text.replace("greet", "welcome")
}

fn rename_request() -> PermissionRequest {
    let file = |name: &str, before: &str| FileTexts {
        path: PathBuf::from(format!("/work/project/{name}")),
        before: before.into(),
        after: renamed(before),
    };
    let mut req = tool_request(
        "LSP",
        "LSP rename lib.py:1:5 to welcome",
        json!({"operation": "rename", "filePath": "lib.py", "line": 1, "character": 5,
               "newName": "welcome"}),
    );
    req.preview = Some(Display::Diffs {
        files: vec![file("app.py", APP), file("lib.py", LIB)],
    });
    req
}

#[test]
fn a_rename_shows_its_first_file_among_the_others() {
    let mut h = asking(rename_request());
    insta::assert_snapshot!(screen(&mut h, 100, 30));
}

#[test]
fn the_hunk_keys_walk_into_the_next_file() {
    let mut h = asking(rename_request());
    // app.py's one hunk, then lib.py's first.
    h.press(Key::Tab);
    insta::assert_snapshot!(screen(&mut h, 100, 30));
}

#[test]
fn approving_the_whole_set_is_a_plain_allow() {
    let mut h = asking(rename_request());
    h.press(Key::Char('1'));
    assert_eq!(decision(&mut h), [Decision::AllowOnce]);
}

#[test]
fn a_file_left_out_comes_back_unchanged_in_the_approval() {
    let mut h = asking(rename_request());
    // Reject app.py's hunk, then allow once.
    h.press(Key::Char(' '));
    h.press(Key::Char('1'));
    let got = decision(&mut h);
    let [Decision::AllowEdited { files, note, .. }] = got.as_slice() else {
        panic!("expected AllowEdited, got {got:?}");
    };
    assert_eq!(
        *files,
        [
            EditedFile {
                path: PathBuf::from("/work/project/app.py"),
                content: APP.into(),
            },
            EditedFile {
                path: PathBuf::from("/work/project/lib.py"),
                content: renamed(LIB),
            },
        ]
    );
    assert!(note.contains("app.py"), "{note}");
}
