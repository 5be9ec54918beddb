//! Composer unit tests: word at cursor, height, editing keys, cursor position.

use super::*;
use crate::tui::input::Mods;

#[test]
fn word_at_cursor_and_replacement() {
    let mut c = Composer::new(History::default());
    c.insert_str("look at @src/ma");
    assert_eq!(c.word_at_cursor(), Some((8, "@src/ma".to_string())));
    c.replace_word_at_cursor("@src/main.rs ");
    assert_eq!(c.text(), "look at @src/main.rs ");
    assert_eq!(c.word_at_cursor(), None);
}

#[test]
fn height_grows_with_wrapped_text_up_to_the_cap() {
    let mut c = Composer::new(History::default());
    assert_eq!(c.height(40), 2);
    c.insert_str(&"word ".repeat(20));
    assert_eq!(c.height(40), 4);
    c.insert_str(&"word ".repeat(200));
    assert_eq!(c.height(40), MAX_ROWS + 1);
}

#[test]
fn editing_keys_reach_the_text_engine() {
    let mut c = Composer::new(History::default());
    for ch in "hello world".chars() {
        c.edit(KeyInput::plain(Key::Char(ch)));
    }
    c.edit(KeyInput::new(Key::Char('w'), Mods::CTRL));
    assert_eq!(c.text(), "hello ");
}

#[test]
fn ctrl_u_deletes_to_the_line_start_and_the_cursor_is_reported_in_terminal_coordinates() {
    let mut c = Composer::new(History::default());
    c.insert_str("first\nsecond");
    c.edit(KeyInput::ctrl('u'));
    assert_eq!(c.text(), "first\n");
    let mut buf = Buffer::empty(Rect::new(0, 0, 30, 6));
    let area = Rect::new(0, 3, 30, 3);
    let pos = c.render(area, &mut buf, false);
    // Row 2 of the text (below the rule), after the two-column prompt sign.
    assert_eq!(pos, Some(Position::new(2, 5)));
}

#[test]
fn pasted_image_paths_show_as_numbered_images_and_are_sent_as_mentions() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.png"), dir.path().join("b c.jpg"));
    std::fs::write(&a, b"x").unwrap();
    std::fs::write(&b, b"x").unwrap();
    let mut c = Composer::new(History::default());
    c.insert_str("compare ");
    c.paste(&a.display().to_string());
    c.insert_str(" with ");
    c.paste(&format!("'{}'", b.display()));
    assert_eq!(c.text(), "compare [Image #1] with [Image #2]");
    let sent = c.take_submission().unwrap();
    assert_eq!(
        sent,
        format!("compare @{} with @\"{}\"", a.display(), b.display())
    );
}
