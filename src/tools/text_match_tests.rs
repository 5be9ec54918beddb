use super::*;
use proptest::prelude::*;

#[test]
fn exact_match_first() {
    let l = locate("let a = 1;\nlet b = 2;\n", "let b = 2;", "let b = 3;").unwrap();
    assert_eq!(l.kind, MatchKind::Exact);
    assert_eq!(l.occurrences.len(), 1);
    assert_eq!(l.occurrences[0].range, 11..21);
    assert_eq!(l.occurrences[0].replacement, "let b = 3;");
}

#[test]
fn curly_quotes_in_file_straight_in_old() {
    let content = "say(\u{201C}hello\u{201D});\nit\u{2019}s fine\n";
    let l = locate(content, "say(\"hello\");", "say(\"bye\");").unwrap();
    assert_eq!(l.kind, MatchKind::Quotes);
    let occ = &l.occurrences[0];
    assert_eq!(&content[occ.range.clone()], "say(\u{201C}hello\u{201D});");
    assert_eq!(occ.replacement, "say(\u{201C}bye\u{201D});");

    let l = locate(content, "it's fine", "it's great, isn't it 'really'").unwrap();
    assert_eq!(
        l.occurrences[0].replacement,
        "it\u{2019}s great, isn\u{2019}t it \u{2018}really\u{2019}"
    );
}

#[test]
fn line_number_prefixes_are_stripped() {
    let content = "fn a() {\n    body();\n}\n";
    for old in ["     2\t    body();", "2→    body();", "  2 |     body();"] {
        let l = locate(content, old, "     2\t    other();").unwrap();
        assert_eq!(l.kind, MatchKind::LinePrefixes, "{old}");
        assert_eq!(l.occurrences[0].range, 9..20);
        assert_eq!(l.occurrences[0].replacement, "    other();");
    }
    // New string without prefixes stays as written.
    let l = locate(
        content,
        "     1\tfn a() {\n     2\t    body();",
        "fn b() {\n    x();",
    )
    .unwrap();
    assert_eq!(l.occurrences[0].replacement, "fn b() {\n    x();");
}

#[test]
fn not_found_and_multiple() {
    assert_eq!(locate("abc", "xyz", "q"), None);
    assert_eq!(locate("abc", "", "q"), None);
    let l = locate("x x x", "x", "y").unwrap();
    assert_eq!(l.occurrences.len(), 3);
}

#[test]
fn strip_requires_every_line() {
    assert_eq!(
        strip_line_prefixes("  12\tfoo\n  13\tbar").as_deref(),
        Some("foo\nbar")
    );
    assert_eq!(strip_line_prefixes("  12\tfoo\nbar"), None);
    assert_eq!(strip_line_prefixes("plain"), None);
}

#[test]
fn line_ranges() {
    let c = "a\nbb\nccc\n";
    assert_eq!(line_of(c, 0), 1);
    assert_eq!(line_of(c, 2), 2);
    assert_eq!(lines_of(c, &(2..5)), (2, 2));
    assert_eq!(lines_of(c, &(2..6)), (2, 3));
    assert_eq!(lines_of(c, &(0..0)), (1, 1));
}

#[test]
fn closest_region_by_votes_and_similarity() {
    let content = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n";
    let old = "    let total = compute(1, 3);\n    println!(\"{total}\");";
    assert_eq!(closest_region(content, old), Some((2, 3)));
    let old = "    let totl = compute(1, 2)";
    assert_eq!(closest_region(content, old), Some((2, 2)));
    assert_eq!(closest_region(content, "zzzzzzzzzzzzzzzzzzzz"), None);
}

fn quote_or_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("\u{2018}".to_string()),
            Just("\u{2019}".to_string()),
            Just("\u{201C}".to_string()),
            Just("\u{201D}".to_string()),
            Just("\u{2032}".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            "[a-z \n]{0,4}",
            "\\PC{0,3}",
        ],
        0..12,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn normalisation_changes_only_quotes(s in quote_or_text()) {
        let n = normalize_quotes(&s);
        prop_assert_eq!(n.chars().count(), s.chars().count());
        for (a, b) in s.chars().zip(n.chars()) {
            if a != b {
                prop_assert!(SINGLE_QUOTES.contains(&a) || DOUBLE_QUOTES.contains(&a));
                prop_assert!(b == '\'' || b == '"');
            }
        }
    }

    #[test]
    fn located_match_is_real_substring(content in quote_or_text(), start in 0usize..40, len in 1usize..10, new in quote_or_text()) {
        // Take a window of the normalised content as old_string, so a match always exists.
        let norm = normalize_quotes(&content);
        let chars: Vec<char> = norm.chars().collect();
        if chars.is_empty() { return Ok(()); }
        let s = start % chars.len();
        let e = (s + len).min(chars.len());
        let old: String = chars[s..e].iter().collect();
        let found = locate(&content, &old, &new);
        prop_assert!(found.is_some());
        let found = found.unwrap();
        let mut prev_end = 0;
        for occ in &found.occurrences {
            prop_assert!(occ.range.start >= prev_end);
            prop_assert!(content.is_char_boundary(occ.range.start) && content.is_char_boundary(occ.range.end));
            let actual = &content[occ.range.clone()];
            prop_assert_eq!(normalize_quotes(actual), normalize_quotes(&old));
            prop_assert_eq!(normalize_quotes(&occ.replacement), normalize_quotes(&new));
            prev_end = occ.range.end;
        }
    }

    #[test]
    fn locate_and_closest_never_panic(content in "\\PC{0,60}", old in "\\PC{0,20}", new in "\\PC{0,10}") {
        let _ = locate(&content, &old, &new);
        let _ = closest_region(&content, &old);
        let _ = strip_line_prefixes(&old);
    }
}
