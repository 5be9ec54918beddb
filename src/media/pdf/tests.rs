//! Tests of PDF reading: the `pages` syntax, page ranges and their clamping, rendering,
//! text positioning and form XObjects, normalisation, encrypted files, and that damaged or
//! random bytes give errors rather than panics.

use std::time::Instant;

use lopdf::{Document, Object, Stream, dictionary};

use super::{MAX_PAGES_PER_READ, PageRange, Pdf, build_test_pdf, normalise, parse_pages, render};

fn range(first: usize, last: usize) -> PageRange {
    PageRange { first, last }
}

fn four_pages() -> Pdf {
    let bytes = build_test_pdf(&["alpha page", "beta page", "", "delta"]);
    Pdf::load(&bytes).expect("fixture loads")
}

#[test]
fn reads_pages_of_a_built_document() {
    let pdf = four_pages();
    assert_eq!(pdf.page_count(), 4);
    let pages = pdf.pages_text(range(1, 2)).expect("pages 1-2");
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[0].0, 1);
    assert!(pages[0].1.contains("alpha"), "{pages:?}");
    assert_eq!(pages[1].0, 2);
    assert!(pages[1].1.contains("beta"), "{pages:?}");
}

#[test]
fn an_empty_page_renders_as_no_text() {
    let pdf = four_pages();
    let pages = pdf.pages_text(range(3, 3)).expect("page 3");
    assert_eq!(pages, vec![(3, String::new())]);
    let shown = render(&pages);
    assert_eq!(
        shown,
        "--- page 3 ---\n(no text on this page: it may be a scanned image)\n"
    );
}

#[test]
fn a_range_past_the_end_is_clamped() {
    let pdf = four_pages();
    let pages = pdf.pages_text(range(3, 10)).expect("pages 3-10");
    let numbers: Vec<usize> = pages.iter().map(|(number, _)| *number).collect();
    assert_eq!(numbers, vec![3, 4]);
    assert_eq!(pages[1].1, "delta");
}

#[test]
fn a_range_starting_past_the_end_names_the_page_count() {
    let err = four_pages()
        .pages_text(range(7, 8))
        .expect_err("past the end");
    assert!(err.contains("4 pages"), "{err}");
}

#[test]
fn render_labels_each_page() {
    let shown = render(&[(1, "one".into()), (2, "two\nlines".into())]);
    assert_eq!(shown, "--- page 1 ---\none\n--- page 2 ---\ntwo\nlines\n");
}

#[test]
fn lines_and_special_characters_survive() {
    let bytes = build_test_pdf(&["first line  \nsecond (line) \\ café"]);
    let pages = Pdf::load(&bytes)
        .expect("loads")
        .pages_text(range(1, 1))
        .expect("page 1");
    assert_eq!(pages[0].1, "first line\nsecond (line) \\ café");
}

#[test]
fn parse_pages_accepts_numbers_and_ranges() {
    assert_eq!(parse_pages("3"), Ok(range(3, 3)));
    assert_eq!(parse_pages("1-5"), Ok(range(1, 5)));
    assert_eq!(parse_pages(" 2 - 4 "), Ok(range(2, 4)));
    assert_eq!(parse_pages("1-20"), Ok(range(1, 20)));
    assert_eq!(parse_pages("7-7"), Ok(range(7, 7)));
}

#[test]
fn parse_pages_rejects_bad_forms_with_help() {
    for bad in [
        "0",
        "5-3",
        "a",
        "1-",
        "",
        "-2",
        "+3",
        "1-2-3",
        "0-4",
        "1.5",
        "99999999999999999999999",
    ] {
        let err = parse_pages(bad).expect_err(bad);
        assert!(
            err.contains("\"1-5\"") && err.contains("20"),
            "{bad}: {err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn parse_pages_rejects_too_wide_ranges() {
    let err = parse_pages("1-21").expect_err("too wide");
    assert!(err.contains("21 pages") && err.contains("20"), "{err}");
}

#[test]
fn hand_made_ranges_are_checked_and_capped() {
    let bytes = build_test_pdf(&["x"; 30]);
    let pdf = Pdf::load(&bytes).expect("loads");
    assert!(pdf.pages_text(range(0, 2)).is_err());
    assert!(pdf.pages_text(range(3, 2)).is_err());
    assert_eq!(
        pdf.pages_text(range(1, 30)).expect("capped").len(),
        MAX_PAGES_PER_READ
    );
}

#[test]
fn truncated_and_random_bytes_are_errors() {
    let bytes = build_test_pdf(&["alpha page", "beta page"]);
    for cut in [0, 8, bytes.len() / 3, bytes.len() / 2, bytes.len() - 40] {
        let result = Pdf::load(&bytes[..cut]);
        if let Ok(pdf) = result {
            // Lenient loading may recover a page; reading it must still not panic.
            let _ = pdf.pages_text(range(1, 2));
        }
    }
    assert!(Pdf::load(&bytes[..bytes.len() / 2]).is_err());
    assert!(Pdf::load(&random_bytes(4096, 7)).is_err());
    let mut fake = b"%PDF-1.7\n".to_vec();
    fake.extend(random_bytes(4096, 11));
    let err = Pdf::load(&fake).err().unwrap_or_default();
    assert!(!err.is_empty() && !err.contains('\n'), "{err}");
}

#[test]
fn damaged_bytes_never_panic() {
    let bytes = build_test_pdf(&["alpha page\nmore", "beta page", "", "delta"]);
    for seed in 0..200u64 {
        let mut damaged = bytes.clone();
        for (offset, noise) in random_bytes(8, seed)
            .chunks(2)
            .map(|pair| (pair[0], pair[1]))
        {
            let at = (usize::from(offset) * 7 + seed as usize * 13) % damaged.len();
            damaged[at] = noise;
        }
        if let Ok(pdf) = Pdf::load(&damaged) {
            let _ = pdf.pages_text(range(1, 4));
        }
    }
}

#[test]
fn password_encrypted_files_are_refused() {
    let err = Pdf::load(&encrypted_pdf("secret"))
        .err()
        .unwrap_or_default();
    assert!(err.contains("encrypted"), "{err}");
}

#[test]
fn files_with_an_empty_user_password_read_normally() {
    let pdf = Pdf::load(&encrypted_pdf("")).expect("opens without a password");
    let pages = pdf.pages_text(range(1, 1)).expect("page 1");
    assert_eq!(pages[0].1, "hidden text");
}

#[test]
fn text_in_a_form_xobject_is_found() {
    let mut doc = Document::load_mem(&build_test_pdf(&["page text"])).expect("fixture");
    let font_id = doc.objects.iter().find_map(|(id, object)| {
        let font = object.as_dict().ok()?.get(b"BaseFont").ok()?;
        (font.as_name().ok()? == b"Helvetica").then_some(*id)
    });
    let font_id = font_id.expect("font");
    let form_content = b"BT /F9 10 Tf 72 500 Td (inside the form) Tj ET".to_vec();
    let form = Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "F9" => font_id } },
        },
        form_content,
    );
    let form_id = doc.add_object(form);
    let page_id = *doc.get_pages().get(&1).expect("page 1");
    let drawn = doc.add_object(Stream::new(dictionary! {}, b"q /Fm1 Do Q".to_vec()));
    let page = doc.get_dictionary_mut(page_id).expect("page");
    let old = page.get(b"Contents").expect("contents").clone();
    page.set("Contents", vec![old, drawn.into()]);
    page.set(
        "Resources",
        dictionary! { "Font" => dictionary! { "F1" => font_id }, "XObject" => dictionary! { "Fm1" => form_id } },
    );
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("save");
    let pages = Pdf::load(&bytes)
        .expect("loads")
        .pages_text(range(1, 1))
        .expect("page 1");
    assert_eq!(pages[0].1, "page text\ninside the form");
}

#[test]
fn positioning_gives_lines_and_spaces() {
    let content = b"BT /F1 12 Tf 72 700 Td (one) Tj 40 0 Td (two) Tj 0 -14 Td [(thr) -20 (ee) -300 (four)] TJ ET \
        BT 1 0 0 1 72 600 Tm (five) Tj 1 0 0 1 120 600 Tm (six) Tj 1 0 0 1 72 580 Tm (seven) Tj ET";
    let pages = one_page_with_content(content);
    assert_eq!(pages, "one two\nthree four\nfive six\nseven");
}

#[test]
fn normalise_cleans_line_ends_and_controls() {
    assert_eq!(normalise("\n\n a  \r\nb\t\rc\u{7}d   \n\n"), " a\nb\ncd");
    assert_eq!(normalise(" \n \n"), "");
    assert_eq!(normalise("e\u{FB03}cient \u{FB01}le"), "efficient file");
}

/// The text of a one-page document whose page content is `content`.
fn one_page_with_content(content: &[u8]) -> String {
    let mut doc = Document::load_mem(&build_test_pdf(&["placeholder"])).expect("fixture");
    let page_id = *doc.get_pages().get(&1).expect("page 1");
    let stream_id = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
    doc.get_dictionary_mut(page_id)
        .expect("page")
        .set("Contents", stream_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("save");
    let pdf = Pdf::load(&bytes).expect("loads");
    pdf.pages_text(range(1, 1)).expect("page 1").remove(0).1
}

/// A one-page fixture encrypted (RC4, 128 bits) with `user_password`.
fn encrypted_pdf(user_password: &str) -> Vec<u8> {
    use lopdf::{EncryptionState, EncryptionVersion, Permissions};
    let mut doc = Document::load_mem(&build_test_pdf(&["hidden text"])).expect("fixture");
    let id = Object::string_literal(b"0123456789abcdef".to_vec());
    doc.trailer.set("ID", vec![id.clone(), id]);
    let version = EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password,
        key_length: 128,
        permissions: Permissions::all(),
    };
    let state = EncryptionState::try_from(version).expect("encryption state");
    doc.encrypt(&state).expect("encrypt");
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("save");
    bytes
}

/// Deterministic noise (xorshift).
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}

/// Times a 20-page read of a 100-page document: run with
/// `cargo test --release -- --ignored --nocapture timing`.
#[test]
#[ignore]
fn timing_of_a_page_range_in_a_hundred_page_document() {
    let line = "The quick brown fox jumps over the lazy dog; pack my box with five dozen jugs.";
    let page = vec![line; 45].join("\n");
    let texts: Vec<&str> = (0..100).map(|_| page.as_str()).collect();
    let bytes = build_test_pdf(&texts);
    let start = Instant::now();
    let pdf = Pdf::load(&bytes).expect("loads");
    let loaded = start.elapsed();
    let pages = pdf.pages_text(range(40, 59)).expect("pages 40-59");
    let total = start.elapsed();
    assert_eq!(pages.len(), 20);
    assert!(pages.iter().all(|(_, text)| text.lines().count() == 45));
    println!(
        "{} KiB, 100 pages: load {:.2} ms, pages 40-59 text {:.2} ms, total {:.2} ms",
        bytes.len() / 1024,
        loaded.as_secs_f64() * 1000.0,
        (total - loaded).as_secs_f64() * 1000.0,
        total.as_secs_f64() * 1000.0
    );
}
