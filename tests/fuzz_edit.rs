//! Fuzz targets for the edit matcher (`tools::text_match`, `tools::edit_core::apply_edits`) and
//! the encoding round trips edits rely on (`files::encoding`). Each case is checked against an
//! oracle from the standard library, not just for not panicking.

#[path = "support/fuzz.rs"]
mod fuzz;

use cairn::files::encoding::{
    Encoding, LineEnding, TextFormat, decode, decode_owned, encode, normalize_input,
};
use cairn::tools::edit_core::{EditSpec, apply_edits};
use cairn::tools::text_match::{MatchKind, locate, normalize_quotes, strip_line_prefixes};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Few characters, so matches are frequent: quotes of every kind, line-number prefixes
/// (digits, tab, `→`, `|`), newlines and CR, a multi-byte letter.
const ALPHABET: &[char] = &[
    'a', 'b', ' ', '\n', '\t', '\r', '"', '\'', '1', '2', '|', '→', 'é', '\u{2018}', '\u{2019}',
    '\u{201C}', '\u{201D}', '\u{2032}', '\u{2033}',
];

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(ALPHABET), 0..max)
        .prop_map(|cs| cs.into_iter().collect())
}

/// (content, old, new): `old` is a slice of the content half the time, random otherwise.
fn edit_case() -> impl Strategy<Value = (String, String, String)> {
    (
        text(80),
        text(8),
        text(8),
        any::<(usize, usize)>(),
        any::<bool>(),
    )
        .prop_map(|(content, random_old, new, (a, b), slice)| {
            let chars: Vec<char> = content.chars().collect();
            let old = if slice && !chars.is_empty() {
                let start = a % chars.len();
                let len = 1 + b % (chars.len() - start).min(12);
                chars[start..start + len].iter().collect()
            } else {
                random_old
            };
            (content, old, new)
        })
}

fn spec(old: &str, new: &str, replace_all: bool) -> [EditSpec; 1] {
    [EditSpec {
        old_string: old.to_string(),
        new_string: new.to_string(),
        replace_all,
        expected_replacements: None,
    }]
}

fn check(ok: bool, what: &str) -> Result<(), TestCaseError> {
    if ok {
        Ok(())
    } else {
        Err(TestCaseError::fail(what.to_string()))
    }
}

#[test]
fn fuzz_edit_matcher_agrees_with_str_replace() {
    fuzz::fuzz("edit_matcher", edit_case(), |(content, old, new)| {
        let found = locate(&content, &old, &new);
        if old.is_empty() {
            return check(found.is_none(), "an empty old_string never matches");
        }
        // Every range is a real, ordered, non-overlapping char-boundary slice of the content.
        if let Some(l) = &found {
            check(!l.occurrences.is_empty(), "a match has occurrences")?;
            let mut end = 0;
            for o in &l.occurrences {
                check(o.range.start >= end, "ordered, not overlapping")?;
                check(
                    content.get(o.range.clone()).is_some(),
                    "a char-boundary range",
                )?;
                end = o.range.end;
            }
        }
        let exact = content.matches(old.as_str()).count();
        if exact > 0 {
            let l = found
                .as_ref()
                .ok_or_else(|| TestCaseError::fail("exact text missed"))?;
            check(l.kind == MatchKind::Exact, "exact matching comes first")?;
            check(l.occurrences.len() == exact, "every exact occurrence found")?;
            let all = apply_edits(&content, &spec(&old, &new, true), LineEnding::Lf)
                .map_err(|e| TestCaseError::fail(e.message))?;
            prop_assert_eq!(all, content.replace(old.as_str(), &new));
            let one = apply_edits(&content, &spec(&old, &new, false), LineEnding::Lf);
            if exact == 1 {
                let one = one.map_err(|e| TestCaseError::fail(e.message))?;
                prop_assert_eq!(one, content.replacen(old.as_str(), &new, 1));
            } else {
                check(
                    one.is_err(),
                    "several matches without replace_all are refused",
                )?;
            }
            return Ok(());
        }
        // No exact occurrence: the forgiving strategies must only find what normalises equal.
        let norm_content = normalize_quotes(&content);
        let stripped = strip_line_prefixes(&old).filter(|s| !s.is_empty());
        let quotes_possible = norm_content.contains(&normalize_quotes(&old));
        let prefixes_possible = stripped
            .as_deref()
            .is_some_and(|s| norm_content.contains(&normalize_quotes(s)));
        let Some(l) = found else {
            return check(
                !quotes_possible && !prefixes_possible,
                "a normalised occurrence exists but was missed",
            );
        };
        check(
            quotes_possible || prefixes_possible,
            "matched with no normalised occurrence",
        )?;
        let wanted = match l.kind {
            MatchKind::Exact => return Err(TestCaseError::fail("exact kind without exact text")),
            MatchKind::Quotes => normalize_quotes(&old),
            MatchKind::LinePrefixes => normalize_quotes(stripped.as_deref().unwrap_or_default()),
        };
        for o in &l.occurrences {
            prop_assert_eq!(normalize_quotes(&content[o.range.clone()]), wanted.clone());
        }
        if l.kind == MatchKind::Quotes {
            for o in &l.occurrences {
                // The replacement differs from new_string in quote style only.
                prop_assert_eq!(normalize_quotes(&o.replacement), normalize_quotes(&new));
            }
            if l.occurrences.len() == 1 {
                let out = apply_edits(&content, &spec(&old, &new, false), LineEnding::Lf)
                    .map_err(|e| TestCaseError::fail(e.message))?;
                prop_assert_eq!(
                    normalize_quotes(&out),
                    norm_content.replacen(&wanted, &normalize_quotes(&new), 1)
                );
            }
        }
        Ok(())
    });
}

/// Edits of a CRLF file: the model may send `\r\n` or `\n`; the result is the same.
#[test]
fn fuzz_edit_crlf_input_means_the_same_lines() {
    fuzz::fuzz("edit_crlf", edit_case(), |(content, old, new)| {
        let content = content.replace('\r', "");
        let old = old.replace('\r', "");
        let new = new.replace('\r', "");
        if old.is_empty() || !content.contains(&old) {
            return Ok(());
        }
        let lf = apply_edits(&content, &spec(&old, &new, true), LineEnding::CrLf);
        let crlf = apply_edits(
            &content,
            &spec(&old.replace('\n', "\r\n"), &new.replace('\n', "\r\n"), true),
            LineEnding::CrLf,
        );
        prop_assert_eq!(lf.map_err(|e| e.message), crlf.map_err(|e| e.message));
        let old_crlf = old.replace('\n', "\r\n");
        prop_assert_eq!(normalize_input(&old_crlf, LineEnding::CrLf), old.as_str());
        Ok(())
    });
}

fn format() -> impl Strategy<Value = TextFormat> {
    (
        proptest::sample::select(vec![
            Encoding::Utf8,
            Encoding::Utf8Bom,
            Encoding::Utf16Le,
            Encoding::Utf16Be,
        ]),
        any::<bool>(),
    )
        .prop_map(|(encoding, crlf)| TextFormat {
            encoding,
            line_ending: if crlf {
                LineEnding::CrLf
            } else {
                LineEnding::Lf
            },
        })
}

/// File bytes: arbitrary, or text encoded in some format (often cut or with a byte changed).
fn file_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64),
        (text(40), format(), any::<(u8, usize, bool)>()).prop_map(|(t, f, (byte, at, damage))| {
            let mut b = encode(&t, f);
            if damage && !b.is_empty() {
                let i = at % b.len();
                b[i] = byte;
            }
            b
        }),
    ]
}

#[test]
fn fuzz_encoding_round_trips_keep_the_bytes() {
    fuzz::fuzz("encoding_round_trip", file_bytes(), |bytes| {
        let d = decode(&bytes);
        prop_assert_eq!(&d, &decode_owned(bytes.clone()));
        if !d.lossy {
            // A file that decoded cleanly is written back byte for byte.
            prop_assert_eq!(encode(&d.text, d.format), bytes);
        }
        Ok(())
    });
}

#[test]
fn fuzz_encoded_text_decodes_to_itself() {
    fuzz::fuzz("encode_decode", (text(40), format()), |(t, f)| {
        // Texts a decode can produce in that format: without CR (a CRLF file's text has none
        // before LF, and an LF text whose every LF follows a CR reads as CRLF; texts with CRs
        // are covered byte for byte by the target above), and not starting with U+FEFF (that
        // reads as a byte-order mark).
        let t = t.replace('\r', "");
        let t = t.trim_start_matches('\u{FEFF}').to_string();
        let d = decode(&encode(&t, f));
        prop_assert!(!d.lossy);
        prop_assert_eq!(&d.text, &t);
        prop_assert_eq!(d.format.encoding, f.encoding);
        Ok(())
    });
}
