//! The review widget through its public API only, the way the permission prompt uses it: a real
//! file on disk, a change proposed, hunks chosen with keys, the person's own edit through an
//! editor command, and the approved content written back.

use std::fs;
use std::path::Path;

use cairn::tui::prompt::editor::{self, EditorError};
use cairn::tui::review::{DiffView, ReviewKey};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

const BEFORE: &str = "alpha\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nomega\n";
const AFTER: &str = "ALPHA\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nOMEGA\n";

fn screen(view: &mut DiffView, width: u16, height: u16) -> String {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    view.render(buf.area, &mut buf);
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn rejecting_the_second_hunk_writes_only_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("greek.txt");
    fs::write(&file, BEFORE).unwrap();

    let mut view = DiffView::new(
        file.clone(),
        fs::read_to_string(&file).unwrap(),
        AFTER.into(),
    );
    screen(&mut view, 80, 20);
    assert!(view.handle_key(ReviewKey::NextHunk));
    assert!(view.handle_key(ReviewKey::ToggleHunk));
    assert_eq!(view.summary(), "+2 -2, 1 of 2 hunks accepted");
    let shown = screen(&mut view, 80, 20);
    assert!(
        shown.contains("@@ -9,4 +9,4 @@  hunk 2 of 2  ✗ rejected"),
        "{shown}"
    );

    let (content, note) = view.approved_content();
    fs::write(&file, &content).unwrap();
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        "ALPHA\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nomega\n"
    );
    assert!(note.contains("-omega\n+OMEGA\n"), "{note}");
    assert!(!note.contains("ALPHA"), "{note}");
}

#[test]
fn the_persons_edit_replaces_the_proposal_and_the_model_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let ed = dir.path().join("ed.sh");
    fs::write(&ed, "#!/bin/sh\nsed -i s/OMEGA/Omega/ \"$1\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&ed, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = Path::new("greek.txt");
    let mut view = DiffView::new(path.into(), BEFORE.into(), AFTER.into());
    let edited = editor::edit_with(&ed.display().to_string(), path, AFTER).unwrap();
    view.set_after(edited);
    let (content, note) = view.approved_content();
    assert_eq!(content, AFTER.replace("OMEGA", "Omega"));
    assert!(note.contains("-OMEGA\n+Omega\n"), "{note}");
    assert!(screen(&mut view, 80, 3).contains("edited by you"));

    // A failing editor leaves the proposal alone.
    let err = editor::edit_with("exit 4 #", path, AFTER).unwrap_err();
    assert!(matches!(err, EditorError::Failed { code: 4, .. }), "{err}");
}
