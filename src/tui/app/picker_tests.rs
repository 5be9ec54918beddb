//! The pickers in the App: `/` opens the command picker (filter, Enter runs, Tab completes),
//! `@` walks the project once and matches file names off the key path, dropping results of
//! queries that were typed over.

use std::path::PathBuf;
use std::sync::Arc;

use super::tests::Harness;
use super::*;
use crate::tui::input::Key;

#[test]
fn the_command_picker_filters_and_enter_runs_the_selection() {
    let mut h = Harness::new();
    h.type_text("/tr");
    let p = h.app.picker().unwrap();
    assert_eq!(p.kind, PickerKind::Commands);
    assert_eq!(p.items[0].label, "/transcript");
    h.press(Key::Enter);
    assert!(h.app.is_transcript_open());
    assert_eq!(h.app.composer_text(), "");
    h.press(Key::Esc);
    h.type_text("/c");
    h.press(Key::Down);
    h.press(Key::Tab);
    assert_eq!(h.app.composer_text(), "/copy ");
    assert!(h.app.picker().is_none());
}

#[test]
fn the_file_picker_walks_once_matches_off_path_and_drops_stale_results() {
    let mut h = Harness::new();
    h.type_text("see ");
    h.press(Key::Char('@'));
    assert_eq!(
        h.press(Key::Char('m')),
        Vec::<AppAction>::new(),
        "the walk is already on its way"
    );
    let files: Arc<Vec<String>> = Arc::new(vec!["README.md".into(), "src/main.rs".into()]);
    let actions = h
        .app
        .handle_app_event(AppEvent::FilesListed(Arc::clone(&files)));
    let (first, query) = match_request(&actions);
    assert_eq!(query, "m");
    let actions = h.press(Key::Char('a'));
    let (second, query) = match_request(&actions);
    assert_eq!(query, "ma");
    h.app.handle_app_event(AppEvent::FilesMatched {
        request_id: first,
        paths: vec!["README.md".into()],
    });
    assert!(
        h.app.picker().unwrap().items.is_empty(),
        "stale result dropped"
    );
    h.app.handle_app_event(AppEvent::FilesMatched {
        request_id: second,
        paths: vec!["src/main.rs".into()],
    });
    h.press(Key::Tab);
    assert_eq!(h.app.composer_text(), "see @src/main.rs ");
    assert!(h.app.picker().is_none());
}

#[test]
fn the_first_at_sign_starts_the_walk() {
    let mut h = Harness::new();
    assert_eq!(
        h.press(Key::Char('@')),
        [AppAction::ListFiles {
            root: PathBuf::from("/work/project")
        }]
    );
}

#[test]
fn reopening_the_file_picker_walks_again_and_matches_the_old_list_meanwhile() {
    let mut h = Harness::new();
    h.press(Key::Char('@'));
    let files: Arc<Vec<String>> = Arc::new(vec!["a.rs".into()]);
    h.app
        .handle_app_event(AppEvent::FilesListed(Arc::clone(&files)));
    h.press(Key::Char(' '));
    assert!(h.app.picker().is_none());
    let actions = h.press(Key::Char('@'));
    assert!(
        matches!(
            actions.as_slice(),
            [AppAction::ListFiles { .. }, AppAction::MatchFiles { .. }]
        ),
        "{actions:?}"
    );
}

/// The one file-match request among `actions`: its id and query.
fn match_request(actions: &[AppAction]) -> (u64, String) {
    match actions {
        [
            AppAction::MatchFiles {
                request_id, query, ..
            },
        ] => (*request_id, query.clone()),
        _ => panic!("expected one match request, got {actions:?}"),
    }
}
