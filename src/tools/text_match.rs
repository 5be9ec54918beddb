//! Finding the text an edit replaces, forgiving the ways models misquote a file.
//!
//! Matching runs in order, stopping at the first strategy that finds anything:
//! 1. exact;
//! 2. with curly quotes and primes normalised to straight ones on both sides — the match is
//!    mapped back to the file's own characters and `new_string`'s straight quotes are converted
//!    to the file's curly style, so the file keeps its typography;
//! 3. with line-number prefixes (`   12\t`, `12→`, `  12 | `) stripped from every line of
//!    `old_string` (and of `new_string` when all its lines carry them), then 1 and 2 again.
//!
//! Invariants: every located range is a char-boundary byte range of the content and its text
//! is a real substring of the file; quote normalisation changes nothing but the quote
//! characters. Nothing here panics on any input.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

/// Which strategy found the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Quotes,
    LinePrefixes,
}

/// One occurrence: where it is and what replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// Byte range in the content.
    pub range: Range<usize>,
    /// The replacement, in the file's quote style.
    pub replacement: String,
}

/// All non-overlapping occurrences found by the first strategy that found any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub kind: MatchKind,
    pub occurrences: Vec<Occurrence>,
}

const SINGLE_QUOTES: [char; 3] = ['\u{2018}', '\u{2019}', '\u{2032}'];
const DOUBLE_QUOTES: [char; 3] = ['\u{201C}', '\u{201D}', '\u{2033}'];

fn straighten(c: char) -> char {
    if SINGLE_QUOTES.contains(&c) {
        '\''
    } else if DOUBLE_QUOTES.contains(&c) {
        '"'
    } else {
        c
    }
}

/// Curly quotes and primes become straight ones; every other character is kept.
pub fn normalize_quotes(s: &str) -> String {
    s.chars().map(straighten).collect()
}

/// Find `old` in `content` (see the module docs). `old` must not be empty.
pub fn locate(content: &str, old: &str, new: &str) -> Option<Located> {
    if old.is_empty() {
        return None;
    }
    if let Some(found) = locate_plain(content, old, new) {
        return Some(found);
    }
    let stripped_old = strip_line_prefixes(old)?;
    if stripped_old.is_empty() {
        return None;
    }
    let stripped_new = strip_line_prefixes(new).unwrap_or_else(|| new.to_string());
    locate_plain(content, &stripped_old, &stripped_new).map(|l| Located {
        kind: MatchKind::LinePrefixes,
        occurrences: l.occurrences,
    })
}

fn locate_plain(content: &str, old: &str, new: &str) -> Option<Located> {
    let exact: Vec<Occurrence> = find_all(content, old)
        .map(|range| Occurrence {
            range,
            replacement: new.to_string(),
        })
        .collect();
    if !exact.is_empty() {
        return Some(Located {
            kind: MatchKind::Exact,
            occurrences: exact,
        });
    }
    let norm_old = normalize_quotes(old);
    if norm_old == old
        && !content.contains([
            '\u{2018}', '\u{2019}', '\u{2032}', '\u{201C}', '\u{201D}', '\u{2033}',
        ])
    {
        return None;
    }
    let norm_content = normalize_quotes(content);
    let norm_ranges: Vec<Range<usize>> = find_all(&norm_content, &norm_old).collect();
    if norm_ranges.is_empty() {
        return None;
    }
    let ranges = map_ranges_back(content, &norm_content, &norm_ranges);
    let occurrences = ranges
        .into_iter()
        .map(|range| {
            let actual = &content[range.clone()];
            Occurrence {
                replacement: preserve_quote_style(old, actual, new),
                range,
            }
        })
        .collect();
    Some(Located {
        kind: MatchKind::Quotes,
        occurrences,
    })
}

/// Non-overlapping occurrences of `needle`, left to right (SIMD substring search). A match of
/// valid UTF-8 in valid UTF-8 always starts and ends on char boundaries.
fn find_all<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = Range<usize>> + 'a {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let n = needle.len();
    let mut pos = 0;
    std::iter::from_fn(move || {
        let i = pos + finder.find(&hay.as_bytes()[pos..])?;
        pos = i + n;
        Some(i..i + n)
    })
}

/// Map byte ranges in the quote-normalised text back to the original. Normalisation maps each
/// char to exactly one char, so walking both in step converts offsets.
fn map_ranges_back(orig: &str, norm: &str, ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut wanted: Vec<usize> = ranges.iter().flat_map(|r| [r.start, r.end]).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut map = std::collections::HashMap::with_capacity(wanted.len());
    let mut w = wanted.iter().peekable();
    let mut oi = orig
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(orig.len()));
    let ni = norm
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(norm.len()));
    for n in ni {
        let o = oi.next().unwrap_or(orig.len());
        while let Some(&&next) = w.peek() {
            if next == n {
                map.insert(n, o);
                w.next();
            } else if next < n {
                // Not a char boundary of the normalised text: cannot happen for match_indices.
                w.next();
            } else {
                break;
            }
        }
    }
    ranges
        .iter()
        .filter_map(|r| Some(*map.get(&r.start)?..*map.get(&r.end)?))
        .collect()
}

/// Give `new`'s straight quotes the curly style the file used where `old` matched `actual`.
pub fn preserve_quote_style(old: &str, actual: &str, new: &str) -> String {
    if old == actual {
        return new.to_string();
    }
    let has_double = actual.contains(['\u{201C}', '\u{201D}']);
    let has_single = actual.contains(['\u{2018}', '\u{2019}']);
    if !has_double && !has_single {
        return new.to_string();
    }
    let chars: Vec<char> = new.chars().collect();
    let mut out = String::with_capacity(new.len());
    for (i, &c) in chars.iter().enumerate() {
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        let next = chars.get(i + 1).copied();
        let opening = prev.is_none_or(|p| p.is_whitespace() || "([{<—–-".contains(p));
        match c {
            '"' if has_double => out.push(if opening { '\u{201C}' } else { '\u{201D}' }),
            '\'' if has_single => {
                let apostrophe = prev.is_some_and(char::is_alphanumeric)
                    && next.is_some_and(char::is_alphanumeric);
                out.push(if opening && !apostrophe {
                    '\u{2018}'
                } else {
                    '\u{2019}'
                });
            }
            other => out.push(other),
        }
    }
    out
}

fn prefix_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[ \t]*\d+(?:\t|→|[ \t]*\| ?)").ok())
        .as_ref()
}

/// `text` without a line-number prefix on each line, or None unless every non-empty line had
/// one (a partial match means the text is not a pasted Read output).
pub fn strip_line_prefixes(text: &str) -> Option<String> {
    let re = prefix_re()?;
    let mut any = false;
    let mut out = Vec::new();
    for line in text.split('\n') {
        if line.is_empty() {
            out.push(line);
            continue;
        }
        let m = re.find(line)?;
        any = true;
        out.push(&line[m.end()..]);
    }
    any.then(|| out.join("\n"))
}

/// The 1-based line of byte offset `pos` in `content`.
pub fn line_of(content: &str, pos: usize) -> usize {
    let pos = pos.min(content.len());
    content.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The 1-based inclusive line range a byte range covers (an empty range covers its line).
pub fn lines_of(content: &str, range: &Range<usize>) -> (usize, usize) {
    let first = line_of(content, range.start);
    let last_byte = if range.end > range.start {
        range.end - 1
    } else {
        range.start
    };
    // The byte before `end` is the last one matched; a trailing newline belongs to its line.
    (first, line_of(content, last_byte).max(first))
}

/// `cat -n` style: line number right-aligned in 6 columns, a tab, the line.
pub fn numbered_line(number: usize, line: &str) -> String {
    format!("{number:>6}\t{line}")
}

/// The region of `content` that best resembles `old` (1-based inclusive lines), to show the
/// model when nothing matched. Votes by lines that appear (trimmed, quote-normalised) in both;
/// falls back to the most similar single line on files small enough to compare cheaply.
pub fn closest_region(content: &str, old: &str) -> Option<(usize, usize)> {
    let file_lines: Vec<&str> = content.lines().collect();
    let old_lines: Vec<&str> = old.lines().collect();
    if file_lines.is_empty() || old_lines.is_empty() {
        return None;
    }
    let span = old_lines.len();
    let mut index: std::collections::HashMap<String, Vec<usize>> = Default::default();
    for (i, l) in file_lines.iter().enumerate() {
        let key = normalize_quotes(l.trim());
        if key.chars().count() >= 3 {
            index.entry(key).or_default().push(i);
        }
    }
    let mut votes: std::collections::HashMap<usize, usize> = Default::default();
    for (j, l) in old_lines.iter().enumerate() {
        let stripped = strip_line_prefixes(l).unwrap_or_else(|| l.to_string());
        let key = normalize_quotes(stripped.trim());
        if let Some(hits) = index.get(&key) {
            for &i in hits.iter().take(50) {
                if i >= j {
                    *votes.entry(i - j).or_default() += 1;
                }
            }
        }
    }
    let start = match votes
        .into_iter()
        .max_by_key(|&(start, n)| (n, usize::MAX - start))
    {
        Some((start, _)) => start,
        None => most_similar_line(&file_lines, &old_lines)?,
    };
    let end = (start + span).min(file_lines.len());
    Some((start + 1, end.max(start + 1)))
}

fn most_similar_line(file_lines: &[&str], old_lines: &[&str]) -> Option<usize> {
    let (j, first) = old_lines
        .iter()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())?;
    let first = first.trim();
    if file_lines.len() > 20_000 || first.len() > 500 {
        return None;
    }
    let mut best: Option<(f32, usize)> = None;
    for (i, l) in file_lines.iter().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.len() > 1000 {
            continue;
        }
        let ratio = similar::TextDiff::from_chars(first, l).ratio();
        if best.is_none_or(|(r, _)| ratio > r) {
            best = Some((ratio, i));
        }
    }
    match best {
        Some((r, i)) if r >= 0.5 => Some(i.saturating_sub(j)),
        _ => None,
    }
}

#[cfg(test)]
#[path = "text_match_tests.rs"]
mod tests;
