//! Server-sent events: an incremental parser from raw bytes to frames.
//!
//! [`SseParser`] accepts bytes split anywhere (inside a line, inside a CRLF, inside a UTF-8
//! character) and yields the same frames whatever the split. It follows the parts of the
//! WHATWG event-stream rules that model APIs use: `event:` and `data:` fields (one optional
//! space after the colon is dropped), several `data:` lines joined with `\n`, comment lines
//! starting with `:`, and LF, CRLF or lone CR line endings. A frame is dispatched at a blank
//! line, and only if it carried at least one `data:` line. Other fields (`id:`, `retry:`) are
//! ignored. Nothing here does I/O.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `event:` field, or `"message"` when absent.
    pub event: String,
    pub data: String,
}

/// Incremental SSE parser. Feed bytes with [`SseParser::push`]; call [`SseParser::finish`] at
/// the end of the stream to flush a last frame that lacked its blank line.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the current, incomplete line.
    line: Vec<u8>,
    /// The previous byte was a CR, so a following LF belongs to the same line ending.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feed the next bytes; returns the frames completed by them, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseFrame> {
        let mut out = Vec::new();
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
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.line.extend_from_slice(rest);
                    break;
                }
                Some(i) => {
                    self.line.extend_from_slice(&rest[..i]);
                    self.after_cr = rest[i] == b'\r';
                    self.end_line(&mut out);
                    rest = &rest[i + 1..];
                }
            }
        }
        out
    }

    /// The stream ended: dispatch a pending frame even without its closing blank line.
    pub fn finish(&mut self) -> Option<SseFrame> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.dispatch(&mut out);
        out.pop()
    }

    fn end_line(&mut self, out: &mut Vec<SseFrame>) {
        // Taken and given back so the line buffer keeps its capacity across lines.
        let mut line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
        } else if line[0] != b':' {
            self.field(&line);
        }
        line.clear();
        self.line = line;
    }

    fn field(&mut self, line: &[u8]) {
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
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseFrame>) {
        let event = self.event.take();
        if !self.has_data {
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
            out.extend(p.push(c));
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
    fn frame_without_data_is_not_dispatched_and_event_resets() {
        assert_eq!(
            parse_all(&[b"event: a\n\ndata: 1\n\n"]),
            vec![frame("message", "1")]
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
