//! Reading PDF files as text for the Read tool. This module owns the `pages` parameter's
//! syntax ([`parse_pages`]), loading an untrusted PDF from bytes without panicking
//! ([`Pdf::load`]), pulling the text out of a page range ([`Pdf::pages_text`]) and the text
//! the model sees ([`render`]). Text comes from the page content streams (and the form
//! XObjects they draw), decoded through each font's encoding or `ToUnicode` map; line breaks
//! and word spaces are guessed from text positioning, since glyph widths are not consulted.
//! Scanned pages have no text to extract. [`build_test_pdf`] makes fixtures for tests.
//!
//! This file owns the public API: the `pages` syntax, [`Pdf`] (loading, page ranges, the
//! panic guard and text normalisation), [`render`] and the [`build_test_pdf`] fixture
//! builder. The `text` submodule owns the content-stream walk that pulls a page's raw text
//! out of its operators, fonts and form XObjects.

#[cfg(test)]
mod tests;
mod text;

use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::content::{Content, Operation};
use lopdf::{Document, LoadOptions, Object, ObjectId, Stream, dictionary};

/// At most this many pages per Read.
pub const MAX_PAGES_PER_READ: usize = 20;

/// The most bytes any one stream may inflate to while the document loads.
const MAX_STREAM_BYTES: usize = 64 << 20;

/// What the `pages` parameter accepts, for error messages.
fn pages_help() -> String {
    format!(
        "pages takes one page number like \"3\" or an inclusive range like \"1-5\" \
         (pages count from 1, at most {MAX_PAGES_PER_READ} pages per read)"
    )
}

/// A page range as the `pages` parameter gives it: "3", "1-5" (1-based, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRange {
    /// The first page wanted, counting from 1.
    pub first: usize,
    /// The last page wanted, inclusive; never less than `first`.
    pub last: usize,
}

/// Parse "3", "1-5", " 2 - 4 " ; reject "0", "5-3", "a", "1-", "", and ranges wider than
/// [`MAX_PAGES_PER_READ`], with a one-line message telling the model the accepted forms and
/// the maximum.
pub fn parse_pages(text: &str) -> Result<PageRange, String> {
    let range =
        parse_range(text).ok_or_else(|| format!("invalid pages {text:?}: {}", pages_help()))?;
    let width = range.last - range.first + 1;
    if width > MAX_PAGES_PER_READ {
        return Err(format!(
            "pages {}-{} is {width} pages, more than {MAX_PAGES_PER_READ} per read: {}",
            range.first,
            range.last,
            pages_help()
        ));
    }
    Ok(range)
}

/// "N" or "N-M" with `1 <= N <= M`, spaces allowed around each number.
fn parse_range(text: &str) -> Option<PageRange> {
    let (first, last) = match text.split_once('-') {
        Some((first, last)) => (parse_page_number(first)?, parse_page_number(last)?),
        None => {
            let page = parse_page_number(text)?;
            (page, page)
        }
    };
    (first <= last).then_some(PageRange { first, last })
}

/// A page number: ASCII digits only (no sign), at least 1.
fn parse_page_number(text: &str) -> Option<usize> {
    let digits = text.trim();
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&page| page > 0)
}

/// A loaded document.
pub struct Pdf {
    doc: Document,
    /// Page objects in reading order; page N is `pages[N - 1]`.
    pages: Vec<ObjectId>,
}

impl Pdf {
    /// Parse from bytes; a corrupt, truncated or encrypted file gives a one-line message,
    /// never a panic. A file encrypted with an empty user password (copy or print
    /// restrictions only) is decrypted and reads normally.
    pub fn load(bytes: &[u8]) -> Result<Pdf, String> {
        let options = LoadOptions {
            max_decompressed_size: Some(MAX_STREAM_BYTES),
            ..LoadOptions::default()
        };
        let doc = guarded(|| Document::load_mem_with_options(bytes, options))?.map_err(|err| {
            one_line(&format!(
                "not a readable PDF (damaged, truncated or not a PDF at all): {err}"
            ))
        })?;
        if doc.trailer.has(b"Encrypt") && !doc.was_encrypted() {
            return Err("the PDF is encrypted with a password, so its text cannot be read".into());
        }
        let pages: Vec<ObjectId> = guarded(|| doc.page_iter().collect())?;
        if pages.is_empty() {
            return Err("the PDF has no pages that can be found (the file may be damaged)".into());
        }
        Ok(Pdf { doc, pages })
    }

    /// How many pages the document has (at least 1).
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The text of pages `range` (clamped to the document; a range starting past the end is an
    /// Err naming the page count), one entry per page: (1-based page number, text). A page with
    /// no extractable text gives an empty string (the caller says "no text: probably a scanned
    /// page"). A page whose content cannot be decoded at all gives a one-line note in
    /// parentheses saying so instead of its text. At most [`MAX_PAGES_PER_READ`] pages are
    /// returned, whatever the range.
    pub fn pages_text(&self, range: PageRange) -> Result<Vec<(usize, String)>, String> {
        let count = self.page_count();
        if range.first == 0 || range.first > range.last {
            return Err(format!(
                "invalid page range {}-{}: {}",
                range.first,
                range.last,
                pages_help()
            ));
        }
        if range.first > count {
            return Err(format!(
                "page {} is past the end: the document has {}",
                range.first,
                pages_phrase(count)
            ));
        }
        let last = range
            .last
            .min(count)
            .min(range.first + MAX_PAGES_PER_READ - 1);
        Ok((range.first..=last)
            .map(|page| (page, self.page_text(page)))
            .collect())
    }

    /// The normalised text of page `number` (1-based, in range), or a note why there is none.
    fn page_text(&self, number: usize) -> String {
        let Some(&page_id) = self.pages.get(number.wrapping_sub(1)) else {
            return String::new();
        };
        match guarded(|| text::extract_page(&self.doc, page_id)) {
            Ok(Ok(text)) => normalise(&text),
            Ok(Err(err)) => one_line(&format!("(could not extract text from this page: {err})")),
            Err(err) => format!("(could not extract text from this page: {err})"),
        }
    }
}

/// "1 page" or "N pages".
fn pages_phrase(count: usize) -> String {
    match count {
        1 => "1 page".into(),
        _ => format!("{count} pages"),
    }
}

/// Runs `f`, turning a panic inside the PDF library into an error message.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|_| "the PDF parser failed on this file (it is probably damaged)".to_string())
}

/// `text` with its line breaks turned into spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Unix line endings, ligatures spelt out, no control characters but newline and tab, no
/// trailing spaces on a line, no blank lines at either end.
fn normalise(text: &str) -> String {
    let unix = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut clean = String::with_capacity(unix.len());
    for c in unix.chars() {
        match ligature(c) {
            Some(letters) => clean.push_str(letters),
            None if c == '\n' || c == '\t' || !c.is_control() => clean.push(c),
            None => {}
        }
    }
    let lines: Vec<&str> = clean.lines().map(str::trim_end).collect();
    let first = lines.iter().position(|line| !line.is_empty());
    let last = lines.iter().rposition(|line| !line.is_empty());
    match (first, last) {
        (Some(first), Some(last)) => lines[first..=last].join("\n"),
        _ => String::new(),
    }
}

/// The letters of a typographic ligature such as `ﬁ`, which fonts often map text to.
fn ligature(c: char) -> Option<&'static str> {
    match c {
        '\u{FB00}' => Some("ff"),
        '\u{FB01}' => Some("fi"),
        '\u{FB02}' => Some("fl"),
        '\u{FB03}' => Some("ffi"),
        '\u{FB04}' => Some("ffl"),
        '\u{FB05}' | '\u{FB06}' => Some("st"),
        _ => None,
    }
}

/// The output the model reads: each page as `"--- page N ---\n<text>\n"`, and for empty pages
/// `"--- page N ---\n(no text on this page: it may be a scanned image)\n"`.
pub fn render(pages: &[(usize, String)]) -> String {
    let mut out = String::new();
    for (number, text) in pages {
        out.push_str(&format!("--- page {number} ---\n"));
        if text.trim().is_empty() {
            out.push_str("(no text on this page: it may be a scanned image)\n");
        } else {
            out.push_str(text);
            out.push('\n');
        }
    }
    out
}

/// For tests and fixtures: a PDF with one page per string, each page showing its text in
/// Helvetica with WinAnsi encoding, one line per `\n`-separated line (characters outside
/// Latin-1 become `?`). An empty string gives a page with no text.
pub fn build_test_pdf(pages: &[&str]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let kids: Vec<Object> = pages
        .iter()
        .map(|text| {
            let content = Stream::new(dictionary! {}, page_content(text));
            let content_id = doc.add_object(content);
            let page =
                dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => content_id };
            doc.add_object(page).into()
        })
        .collect();
    let count = i64::try_from(kids.len()).unwrap_or(i64::MAX);
    let tree = dictionary! {
        "Type" => "Pages",
        "Kids" => kids,
        "Count" => count,
        "Resources" => resources_id,
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
    };
    doc.objects.insert(pages_id, Object::Dictionary(tree));
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    doc.compress();
    let mut bytes = Vec::new();
    if doc.save_to(&mut bytes).is_err() {
        bytes.clear();
    }
    bytes
}

/// The content stream of a fixture page: each line of `text` shown 14 points below the last.
fn page_content(text: &str) -> Vec<u8> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut operations = vec![
        Operation::new("BT", vec![]),
        Operation::new("Tf", vec!["F1".into(), 12.into()]),
        Operation::new("TL", vec![14.into()]),
        Operation::new("Td", vec![72.into(), 720.into()]),
    ];
    for (index, line) in text.lines().enumerate() {
        if index > 0 {
            operations.push(Operation::new("T*", vec![]));
        }
        operations.push(Operation::new(
            "Tj",
            vec![Object::string_literal(win_ansi(line))],
        ));
    }
    operations.push(Operation::new("ET", vec![]));
    Content { operations }.encode().unwrap_or_default()
}

/// `text` in WinAnsi: Latin-1 characters as themselves, anything else as `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match u8::try_from(c) {
            Ok(byte) if byte >= 0x20 && !(0x7f..0xa0).contains(&byte) => byte,
            _ => b'?',
        })
        .collect()
}
