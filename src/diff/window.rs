//! The window of two texts that holds every change: the common prefix and suffix are cut off at
//! line boundaries, by plain byte comparison, before the line diff runs, so the diff only sees
//! the changed region plus its context. This is what keeps an edit of a 10 MiB file cheap.

/// The changed region of both texts, with `context` unchanged lines around it.
pub(super) struct Window<'a> {
    pub old: &'a str,
    pub new: &'a str,
    /// Bytes before the window (the same in both texts).
    pub start: usize,
    /// Lines before the window (`'\n'`s in the cut prefix).
    pub first_line: usize,
}

pub(super) fn window<'a>(before: &'a str, after: &'a str, context: usize) -> Window<'a> {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let prefix = common_prefix(b, a);
    // Cut after the last newline of the common prefix: a line start in both texts.
    let mut start = b[..prefix]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let max_suffix = b.len().min(a.len()) - start;
    let suffix = common_suffix(&b[b.len() - max_suffix..], &a[a.len() - max_suffix..]);
    // Cut after the first newline inside the common suffix: again a line start in both.
    let suffix_start = b.len() - suffix;
    let mut end_from_back = match b[suffix_start..].iter().position(|&c| c == b'\n') {
        Some(i) => b.len() - (suffix_start + i + 1),
        None => 0,
    };
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = b[..start - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
    }
    for _ in 0..context {
        if end_from_back == 0 {
            break;
        }
        let from = b.len() - end_from_back;
        end_from_back = match b[from..].iter().position(|&c| c == b'\n') {
            Some(i) => b.len() - (from + i + 1),
            None => 0,
        };
    }
    let first_line = b[..start].iter().filter(|&&c| c == b'\n').count();
    Window {
        old: &before[start..before.len() - end_from_back],
        new: &after[start..after.len() - end_from_back],
        start,
        first_line,
    }
}

/// Compared in blocks first: slice equality is a vectorised memcmp, a byte loop is not.
const BLOCK: usize = 256;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}
