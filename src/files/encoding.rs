//! Text encodings and line endings of files on disk.
//!
//! The tools work on *logical text*: a Rust `String` with `\n` line endings and no byte-order
//! mark. [`decode`] turns bytes into logical text plus the [`TextFormat`] it came in; [`encode`]
//! turns logical text back into bytes in that same format, so an edit keeps a file's BOM,
//! UTF-16 encoding and CRLF line endings. The final-newline state is part of the text itself
//! and so survives untouched.
//!
//! Invariant: for a file that decoded without loss, `encode(decode(bytes))` gives back the same
//! bytes. A file is only treated as CRLF when *every* `\n` is preceded by `\r`; a file with
//! mixed endings is kept as-is (its `\r` stay in the text) so nothing is silently rewritten.

/// How the bytes of a file encode its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    #[default]
    Utf8,
    /// UTF-8 with a byte-order mark.
    Utf8Bom,
    Utf16Le,
    Utf16Be,
}

/// Line-ending style of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineEnding {
    #[default]
    Lf,
    CrLf,
}

/// Everything needed to write logical text back the way the file had it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextFormat {
    pub encoding: Encoding,
    pub line_ending: LineEnding,
}

/// The result of decoding a file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Logical text: `\n` line endings, no BOM.
    pub text: String,
    pub format: TextFormat,
    /// Some bytes were not valid in the encoding and were replaced by U+FFFD.
    pub lossy: bool,
}

/// How many leading bytes are inspected for NUL to call a file binary.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// Detect the encoding from a byte-order mark.
pub fn detect_encoding(bytes: &[u8]) -> Encoding {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        Encoding::Utf8Bom
    } else if bytes.starts_with(&[0xFF, 0xFE]) {
        Encoding::Utf16Le
    } else if bytes.starts_with(&[0xFE, 0xFF]) {
        Encoding::Utf16Be
    } else {
        Encoding::Utf8
    }
}

/// A file is binary when its first 8 KiB hold a NUL byte (UTF-16 with a BOM is text).
pub fn looks_binary(bytes: &[u8]) -> bool {
    match detect_encoding(bytes) {
        Encoding::Utf16Le | Encoding::Utf16Be => false,
        _ => bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0),
    }
}

/// Decode a whole file into logical text.
pub fn decode(bytes: &[u8]) -> Decoded {
    decode_owned(bytes.to_vec())
}

/// [`decode`] taking ownership: plain UTF-8 without `\r` is not copied at all.
pub fn decode_owned(mut bytes: Vec<u8>) -> Decoded {
    let encoding = detect_encoding(&bytes);
    let (raw, lossy) = match encoding {
        Encoding::Utf8 => utf8_owned(bytes),
        Encoding::Utf8Bom => {
            bytes.drain(..3);
            utf8_owned(bytes)
        }
        Encoding::Utf16Le => utf16_lossy(&bytes[2..], encoding_rs::UTF_16LE),
        Encoding::Utf16Be => utf16_lossy(&bytes[2..], encoding_rs::UTF_16BE),
    };
    let (text, line_ending) = to_logical(raw);
    Decoded {
        text,
        format: TextFormat {
            encoding,
            line_ending,
        },
        lossy,
    }
}

fn utf8_owned(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

/// Encode logical text in `format`.
pub fn encode(text: &str, format: TextFormat) -> Vec<u8> {
    encode_cow(text, format).into_owned()
}

/// [`encode`] without a copy when the bytes are the text itself (UTF-8, LF).
pub fn encode_cow(text: &str, format: TextFormat) -> std::borrow::Cow<'_, [u8]> {
    if format == TextFormat::default() {
        return std::borrow::Cow::Borrowed(text.as_bytes());
    }
    encode_converted(text, format).into()
}

fn encode_converted(text: &str, format: TextFormat) -> Vec<u8> {
    let with_endings: std::borrow::Cow<'_, str> = match format.line_ending {
        LineEnding::Lf => text.into(),
        LineEnding::CrLf => to_crlf(text).into(),
    };
    match format.encoding {
        Encoding::Utf8 => with_endings.as_bytes().to_vec(),
        Encoding::Utf8Bom => {
            let mut v = Vec::with_capacity(with_endings.len() + 3);
            v.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
            v.extend_from_slice(with_endings.as_bytes());
            v
        }
        Encoding::Utf16Le => {
            let mut v = vec![0xFF, 0xFE];
            for u in with_endings.encode_utf16() {
                v.extend_from_slice(&u.to_le_bytes());
            }
            v
        }
        Encoding::Utf16Be => {
            let mut v = vec![0xFE, 0xFF];
            for u in with_endings.encode_utf16() {
                v.extend_from_slice(&u.to_be_bytes());
            }
            v
        }
    }
}

/// Text the model wrote, made logical for a file with `line_ending` (a CRLF file's edits may
/// arrive with `\r\n` or with `\n`; both mean the same lines).
pub fn normalize_input(text: &str, line_ending: LineEnding) -> std::borrow::Cow<'_, str> {
    match line_ending {
        LineEnding::CrLf if text.contains("\r\n") => text.replace("\r\n", "\n").into(),
        _ => text.into(),
    }
}

/// UTF-16 after its BOM, decoded by `encoding_rs` (unpaired surrogates and an odd last byte
/// become U+FFFD and make the text lossy). Writing UTF-16 back stays with `str::encode_utf16`:
/// `encoding_rs` follows the WHATWG Encoding Standard, whose UTF-16 encoders emit UTF-8.
fn utf16_lossy(bytes: &[u8], encoding: &'static encoding_rs::Encoding) -> (String, bool) {
    let (text, lossy) = encoding.decode_without_bom_handling(bytes);
    (text.into_owned(), lossy)
}

/// CRLF only when every `\n` has a `\r` before it; then the `\r` are dropped.
fn to_logical(raw: String) -> (String, LineEnding) {
    let bytes = raw.as_bytes();
    // Most files have no `\r` at all: one fast scan and no copy.
    if !bytes.contains(&b'\r') {
        return (raw, LineEnding::Lf);
    }
    let mut newlines = 0usize;
    let mut crlf = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            newlines += 1;
            if i > 0 && bytes[i - 1] == b'\r' {
                crlf += 1;
            }
        }
    }
    if newlines > 0 && crlf == newlines {
        (raw.replace("\r\n", "\n"), LineEnding::CrLf)
    } else {
        (raw, LineEnding::Lf)
    }
}

fn to_crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 32);
    for (i, piece) in text.split('\n').enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        out.push_str(piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_round_trip() {
        let d = decode(b"a\nb\n");
        assert_eq!(d.text, "a\nb\n");
        assert_eq!(d.format, TextFormat::default());
        assert!(!d.lossy);
        assert_eq!(encode(&d.text, d.format), b"a\nb\n");
    }

    #[test]
    fn crlf_and_bom_round_trip() {
        let bytes = b"\xEF\xBB\xBFone\r\ntwo\r\nthree";
        let d = decode(bytes);
        assert_eq!(d.text, "one\ntwo\nthree");
        assert_eq!(d.format.encoding, Encoding::Utf8Bom);
        assert_eq!(d.format.line_ending, LineEnding::CrLf);
        assert_eq!(encode(&d.text, d.format), bytes.to_vec());
    }

    #[test]
    fn mixed_endings_stay_as_they_are() {
        let bytes = b"a\r\nb\nc\r\n";
        let d = decode(bytes);
        assert_eq!(d.format.line_ending, LineEnding::Lf);
        assert_eq!(d.text, "a\r\nb\nc\r\n");
        assert_eq!(encode(&d.text, d.format), bytes.to_vec());
    }

    #[test]
    fn utf16_round_trips() {
        for enc in [Encoding::Utf16Le, Encoding::Utf16Be] {
            let fmt = TextFormat {
                encoding: enc,
                line_ending: LineEnding::CrLf,
            };
            let bytes = encode("héllo\nwörld ✓\n", fmt);
            assert!(!looks_binary(&bytes));
            let d = decode(&bytes);
            assert_eq!(d.text, "héllo\nwörld ✓\n");
            assert_eq!(d.format, fmt);
            assert!(!d.lossy);
            assert_eq!(encode(&d.text, d.format), bytes);
        }
    }

    #[test]
    fn invalid_utf8_is_lossy() {
        let d = decode(b"ok \xFF\xFE? no, \xC3(");
        assert!(d.lossy);
        assert!(d.text.contains('\u{FFFD}'));
    }

    #[test]
    fn broken_utf16_is_lossy_and_keeps_what_it_can() {
        // "a", an unpaired high surrogate, "b", then an odd last byte.
        let le = [0xFF, 0xFE, b'a', 0, 0x00, 0xD8, b'b', 0, 0x41];
        let d = decode(&le);
        assert!(d.lossy);
        assert_eq!(d.text, "a\u{FFFD}b\u{FFFD}");
        assert_eq!(d.format.encoding, Encoding::Utf16Le);
        let be = [0xFE, 0xFF, 0, b'o', 0, b'k', 0xDC, 0x00];
        let d = decode(&be);
        assert_eq!((d.text.as_str(), d.lossy), ("ok\u{FFFD}", true));
    }

    #[test]
    fn binary_sniffing() {
        assert!(looks_binary(b"PK\x03\x04\x00\x00"));
        assert!(!looks_binary(b"plain text"));
        let mut late_nul = vec![b'a'; BINARY_SNIFF_BYTES];
        late_nul.push(0);
        assert!(!looks_binary(&late_nul));
    }

    #[test]
    fn input_normalisation_for_crlf_files() {
        assert_eq!(normalize_input("a\r\nb", LineEnding::CrLf), "a\nb");
        assert_eq!(normalize_input("a\r\nb", LineEnding::Lf), "a\r\nb");
    }
}
