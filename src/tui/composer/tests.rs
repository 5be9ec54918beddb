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
