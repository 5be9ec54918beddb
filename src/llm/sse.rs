//! Server-sent events: an incremental parser from raw bytes to frames.
//!
//! [`SseParser`] accepts bytes split anywhere (inside a line, inside a CRLF, inside a UTF-8
//! character) and yields the same frames whatever the split. It follows the parts of the
//! WHATWG event-stream rules that model APIs use: `event:` and `data:` fields (one optional
//! space after the colon is dropped), several `data:` lines joined with `\n`, comment lines
//! starting with `:`, LF, CRLF or lone CR line endings, and a UTF-8 byte-order mark at the very
//! start (dropped). A frame is dispatched at a blank
//! line when it carried at least one `data:` line, or an `event:` name: unlike the browser
//! rules, a named event whose data was cut off is dispatched with empty data, so the client
//! fails on it (the payloads it reads are JSON or `[DONE]`) instead of the event vanishing.
//! Other fields (`id:`, `retry:`) are ignored. Nothing here does I/O.
//!
//! Memory is bounded: one line, and one frame's joined data, may hold at most
//! [`SseParser::limit`] bytes (default [`MAX_EVENT_BYTES`]). A longer one is refused with
//! [`SseError`] as soon as it passes the limit, not when its line ends, so a server that never
//! sends a newline cannot make the parser buffer without end. After an error the parser stays
//! failed. Whether and where the limit trips does not depend on how the bytes were split.

/// The default limit on one line and on one frame's data: 4 MiB. A model's largest real event
/// (a whole tool input sent in one chunk) is far below it.
pub const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// Why the parser stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("a line of the event stream is longer than {limit} bytes")]
    LineTooLong { limit: usize },
    #[error("an event of the event stream carries more than {limit} bytes of data")]
    EventTooLarge { limit: usize },
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `event:` field, or `"message"` when absent.
    pub event: String,
    pub data: String,
}

/// Incremental SSE parser. Feed bytes with [`SseParser::push`]; call [`SseParser::finish`] at
/// the end of the stream to flush a last frame that lacked its blank line.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of the current, incomplete line.
    line: Vec<u8>,
    /// The previous byte was a CR, so a following LF belongs to the same line ending.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    limit: usize,
    failed: Option<SseError>,
    /// How many bytes of a leading byte-order mark have been matched; `None` once decided.
    bom: Option<usize>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Default for SseParser {
    fn default() -> Self {
        SseParser::with_limit(MAX_EVENT_BYTES)
    }
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// A parser refusing lines and frame data longer than `limit` bytes.
    pub fn with_limit(limit: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            event: None,
            data: String::new(),
            has_data: false,
            limit,
            failed: None,
            bom: Some(0),
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Feed the next bytes; the frames they complete are appended to `out`, in order. An `Err`
    /// means a line or a frame passed the limit; frames completed before that point are in
    /// `out`, and every later call fails the same way.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseFrame>) -> Result<(), SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.skip_bom(bytes, out);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
            // Free what was buffered: nothing more will be parsed.
            self.line = Vec::new();
            self.data = String::new();
        }
        result
    }

    /// Drop a byte-order mark at the very start, however the stream was split, then parse.
    fn skip_bom(&mut self, bytes: &[u8], out: &mut Vec<SseFrame>) -> Result<(), SseError> {
        let Some(mut matched) = self.bom else {
            return self.push_inner(bytes, out);
        };
        let mut rest = bytes;
        while let Some((&b, tail)) = rest.split_first() {
            if b != BOM[matched] {
                // Not a mark after all: what looked like one is ordinary data.
                self.bom = None;
                self.push_inner(&BOM[..matched], out)?;
                return self.push_inner(rest, out);
            }
            matched += 1;
            rest = tail;
            if matched == BOM.len() {
                self.bom = None;
                return self.push_inner(rest, out);
            }
        }
        self.bom = Some(matched);
        Ok(())
    }

    fn push_inner(&mut self, bytes: &[u8], out: &mut Vec<SseFrame>) -> Result<(), SseError> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            // Copy whole runs up to the next line ending rather than byte by byte.
            let end = memchr::memchr2(b'\n', b'\r', rest);
            let run = &rest[..end.unwrap_or(rest.len())];
            if self.line.len() + run.len() > self.limit {
                return Err(SseError::LineTooLong { limit: self.limit });
            }
            self.line.extend_from_slice(run);
            match end {
                None => break,
                Some(i) => {
                    self.after_cr = rest[i] == b'\r';
                    self.end_line(out)?;
                    rest = &rest[i + 1..];
                }
            }
        }
        Ok(())
    }

    /// The stream ended: dispatch a pending frame even without its closing blank line. (Every
    /// payload the clients read is JSON or `[DONE]`, so a frame cut short fails to decode
    /// rather than passing for a whole one.) `None` as well after an error.
    pub fn finish(&mut self) -> Option<SseFrame> {
        if self.failed.is_some() {
            return None;
        }
        let mut out = Vec::new();
        if let Some(matched) = self.bom.take()
            && self.push_inner(&BOM[..matched], &mut out).is_err()
        {
            return None;
        }
        if !self.line.is_empty() && self.end_line(&mut out).is_err() {
            return None;
        }
        self.dispatch(&mut out);
        out.pop()
    }

    fn end_line(&mut self, out: &mut Vec<SseFrame>) -> Result<(), SseError> {
        // Taken and given back so the line buffer keeps its capacity across lines.
        let mut line = std::mem::take(&mut self.line);
        let result = if line.is_empty() {
            self.dispatch(out);
            Ok(())
        } else if line[0] != b':' {
            self.field(&line)
        } else {
            Ok(())
        };
        line.clear();
        self.line = line;
        result
    }

    fn field(&mut self, line: &[u8]) -> Result<(), SseError> {
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"data" => {
                // Measured after decoding: a replacement character is longer than the byte.
                let value = String::from_utf8_lossy(value);
                let joined = self.data.len() + usize::from(self.has_data) + value.len();
                if joined > self.limit {
                    return Err(SseError::EventTooLarge { limit: self.limit });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseFrame>) {
        let event = self.event.take();
        if !self.has_data {
            if let Some(event) = event.filter(|e| !e.is_empty()) {
                out.push(SseFrame {
                    event,
                    data: String::new(),
                });
            }
            return;
        }
        self.has_data = false;
        out.push(SseFrame {
            event: event
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "message".to_string()),
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseFrame> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out).unwrap();
        }
        out.extend(p.finish());
        out
    }

    fn frame(event: &str, data: &str) -> SseFrame {
        SseFrame {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_data_comments_and_line_endings() {
        let input = b": comment\r\nevent: ping\r\ndata: {}\r\n\r\nevent:x\ndata:a\ndata: b\n\ndata: plain\r\rid: 7\nretry: 5\n\n";
        assert_eq!(
            parse_all(&[input]),
            vec![
                frame("ping", "{}"),
                frame("x", "a\nb"),
                frame("message", "plain")
            ]
        );
    }

    #[test]
    fn a_named_frame_without_data_is_dispatched_empty_and_event_resets() {
        assert_eq!(
            parse_all(&[b"event: a\n\ndata: 1\n\nid: 3\n\nevent:\n\n: c\n\n"]),
            vec![frame("a", ""), frame("message", "1")]
        );
    }

    #[test]
    fn unterminated_last_frame_is_flushed_by_finish() {
        assert_eq!(
            parse_all(&[b"data: [DONE]"]),
            vec![frame("message", "[DONE]")]
        );
    }

    #[test]
    fn multibyte_characters_split_across_chunks() {
        let bytes = "data: héllo ✓\n\n".as_bytes();
        assert_eq!(
            parse_all(&[&bytes[..8], &bytes[8..14], &bytes[14..]]),
            vec![frame("message", "héllo ✓")]
        );
    }

    #[test]
    fn byte_order_mark_is_dropped_even_when_split() {
        let bytes = b"\xEF\xBB\xBFdata: x\n\n";
        assert_eq!(
            parse_all(&[&bytes[..1], &bytes[1..]]),
            vec![frame("message", "x")]
        );
        // Two bytes of a mark and then something else: those bytes are data.
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(b"\xEF\xBB", &mut out).unwrap();
        p.push(b"data: y\n\n", &mut out).unwrap();
        assert!(
            out.is_empty(),
            "the line `\\xEF\\xBBdata` is an unknown field"
        );
    }

    #[test]
    fn a_line_past_the_limit_fails_before_its_end() {
        let mut p = SseParser::with_limit(16);
        let mut out = Vec::new();
        p.push(b"data: ok\n\n", &mut out).unwrap();
        assert_eq!(out, vec![frame("message", "ok")]);
        // No newline ever comes: the parser refuses once the line passes the limit.
        assert_eq!(
            p.push(&[b'a'; 10], &mut out)
                .and_then(|()| p.push(&[b'a'; 10], &mut out)),
            Err(SseError::LineTooLong { limit: 16 })
        );
        assert_eq!(
            p.push(b"\n", &mut out),
            Err(SseError::LineTooLong { limit: 16 })
        );
        assert_eq!(p.finish(), None);
    }

    #[test]
    fn joined_data_past_the_limit_fails() {
        let mut p = SseParser::with_limit(16);
        let mut out = Vec::new();
        assert_eq!(
            p.push(b"data: 0123456789\ndata: 0123456789\n", &mut out),
            Err(SseError::EventTooLarge { limit: 16 })
        );
        assert!(out.is_empty());
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_frames(
            frames in proptest::collection::vec(("[a-z_]{0,8}", "[ -~é✓]{0,20}", any::<bool>(), any::<bool>()), 0..6),
            cuts in proptest::collection::vec(any::<usize>(), 0..10),
        ) {
            let mut text = String::new();
            for (event, data, crlf, comment) in &frames {
                let nl = if *crlf { "\r\n" } else { "\n" };
                if *comment { text.push_str(&format!(": keep-alive{nl}")); }
                if !event.is_empty() { text.push_str(&format!("event: {event}{nl}")); }
                for line in data.split(' ') { text.push_str(&format!("data: {line}{nl}")); }
                text.push_str(nl);
            }
            let bytes = text.as_bytes();
            let whole = parse_all(&[bytes]);
            prop_assert_eq!(whole.len(), frames.len());
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut start = 0;
            for p in points { chunks.push(&bytes[start..p]); start = p; }
            chunks.push(&bytes[start..]);
            prop_assert_eq!(parse_all(&chunks), whole);
        }
    }
}
