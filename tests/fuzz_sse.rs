//! Fuzz targets for the model stream parsers: the SSE parser over arbitrary bytes split
//! arbitrarily (no panic, and the same frames and the same error however the bytes are split),
//! generated well-formed event streams (exact round trip across LF / CRLF / CR line ends,
//! multi-line data, comments, a byte-order mark), and each wire format's event decoder over
//! arbitrary JSON-ish frames (an event or a clear error, never a panic, and a complete message
//! ends with exactly one `Finished`).

#[path = "support/fuzz.rs"]
mod fuzz;

use cairn::llm::sse::{SseError, SseFrame, SseParser};
use cairn::llm::{LlmError, Provider, StreamEvent, decode_frames};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};

/// Parse `bytes` fed in pieces cut at `cuts`: the frames and the error, if any.
fn parse(bytes: &[u8], cuts: &[usize], limit: usize) -> (Vec<SseFrame>, Option<SseError>) {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    points.push(bytes.len());
    let mut parser = SseParser::with_limit(limit);
    let mut frames = Vec::new();
    let mut start = 0;
    for p in points {
        if let Err(e) = parser.push(&bytes[start..p], &mut frames) {
            return (frames, Some(e));
        }
        start = p;
    }
    frames.extend(parser.finish());
    (frames, None)
}

/// Bytes that hit the parser's interesting cases often: line ends, colons, field names, the
/// byte-order mark, spaces, and invalid UTF-8.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        select(vec![
            &b"\n"[..],
            b"\r",
            b"\r\n",
            b":",
            b": ",
            b"data",
            b"data: ",
            b"event",
            b"event: ",
            b"id: 1",
            b"retry: 5",
            b"\xEF\xBB\xBF",
            b"\xEF\xBB",
            b" ",
            b"\xff\xfe",
            "é✓".as_bytes(),
        ])
        .prop_map(<[u8]>::to_vec),
        proptest::collection::vec(any::<u8>(), 0..6),
        "[a-z{}\"]{0,6}".prop_map(String::into_bytes),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

#[test]
fn sse_any_bytes_any_split_same_frames() {
    let strategy = (
        sse_bytes(),
        proptest::collection::vec(any::<usize>(), 0..12),
        prop_oneof![Just(1usize << 20), 1usize..24],
    );
    fuzz::fuzz(
        "sse_any_bytes_any_split",
        strategy,
        |(bytes, cuts, limit)| {
            let whole = parse(&bytes, &[], limit);
            let split = parse(&bytes, &cuts, limit);
            prop_assert_eq!(&split, &whole);
            // Byte by byte is the most extreme split.
            let every: Vec<usize> = (0..bytes.len()).collect();
            prop_assert_eq!(&parse(&bytes, &every, limit), &whole);
            for f in &whole.0 {
                prop_assert!(!f.event.is_empty());
                prop_assert!(f.data.len() <= limit, "data past the limit");
            }
            Ok(())
        },
    );
}

/// One generated event: its `event:` name (None: the default), its data lines, and whether
/// a comment and an `id:` line go before it.
type GenEvent = (Option<String>, Vec<String>, bool, bool);

fn gen_events() -> impl Strategy<Value = Vec<GenEvent>> {
    let event = (
        proptest::option::of("[a-z_]{1,10}"),
        proptest::collection::vec("[^\r\n]{0,12}", 1..4),
        any::<bool>(),
        any::<bool>(),
    );
    proptest::collection::vec(event, 0..6)
}

#[test]
fn sse_generated_streams_round_trip() {
    let strategy = (
        gen_events(),
        proptest::collection::vec(0u8..3, 1..64),
        any::<bool>(),
        proptest::collection::vec(any::<usize>(), 0..12),
    );
    fuzz::fuzz(
        "sse_generated_streams_round_trip",
        strategy,
        |(events, endings, bom, cuts)| {
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            let mut lines = 0usize;
            let mut after_cr = false;
            let mut line = |text: &mut String, content: &str| {
                text.push_str(content);
                // A lone CR followed by a lone LF would read as one CRLF: make it CR CRLF.
                let ending = match endings[lines % endings.len()] {
                    0 if after_cr => "\r\n",
                    0 => "\n",
                    1 => "\r\n",
                    _ => "\r",
                };
                after_cr = ending == "\r";
                lines += 1;
                text.push_str(ending);
            };
            for (name, data, comment, id) in &events {
                if *comment {
                    line(&mut text, ": keep-alive");
                }
                if *id {
                    line(&mut text, "id: 42");
                }
                if let Some(name) = name {
                    line(&mut text, &format!("event: {name}"));
                }
                for d in data {
                    line(&mut text, &format!("data: {d}"));
                }
                line(&mut text, "");
            }
            let expected: Vec<SseFrame> = events
                .iter()
                .map(|(name, data, _, _)| SseFrame {
                    event: name.clone().unwrap_or_else(|| "message".into()),
                    data: data.join("\n"),
                })
                .collect();
            let (frames, err) = parse(text.as_bytes(), &cuts, 1 << 20);
            prop_assert_eq!(err, None);
            prop_assert_eq!(frames, expected);
            Ok(())
        },
    );
}

/// JSON values shaped like the events of both wire formats, with the names and types they use
/// and a few wrong ones, nested a little.
fn json_ish() -> impl Strategy<Value = Value> {
    let key = select(vec![
        "type",
        "index",
        "delta",
        "content_block",
        "text",
        "thinking",
        "signature",
        "partial_json",
        "input",
        "id",
        "name",
        "message",
        "usage",
        "input_tokens",
        "output_tokens",
        "stop_reason",
        "error",
        "choices",
        "finish_reason",
        "content",
        "reasoning_content",
        "tool_calls",
        "function",
        "arguments",
        "prompt_tokens",
        "completion_tokens",
    ]);
    let leaf = prop_oneof![
        select(vec![
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
            "error",
            "text",
            "thinking",
            "tool_use",
            "text_delta",
            "thinking_delta",
            "signature_delta",
            "input_json_delta",
            "stop",
            "tool_calls",
            "length",
            "end_turn",
            "{\"a\":",
            "{}",
            "",
        ])
        .prop_map(|s| Value::String(s.into())),
        (0u64..4).prop_map(|n| json!(n)),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
        "[^\"]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.into(), v)).collect())),
        ]
    })
}

fn frames() -> impl Strategy<Value = Vec<SseFrame>> {
    let data = prop_oneof![
        4 => json_ish().prop_map(|v| v.to_string()),
        1 => Just("[DONE]".to_string()),
        1 => "[^\n]{0,16}",
    ];
    let frame = (
        select(vec!["message", "ping", "content_block_delta", "error"]),
        data,
    )
        .prop_map(|(event, data)| SseFrame {
            event: event.into(),
            data,
        });
    proptest::collection::vec(frame, 0..16)
}

/// The decoder's contract, whatever the frames: a clear error or a complete message; one
/// `Finished` at most, and last; tool inputs are objects.
fn check_decoding(provider: Provider, frames: &[SseFrame]) -> Result<(), TestCaseError> {
    let (events, err) = decode_frames(provider, frames);
    let finished = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Finished(_)))
        .count();
    match &err {
        None => {
            prop_assert_eq!(finished, 1);
            prop_assert!(matches!(events.last(), Some(StreamEvent::Finished(_))));
        }
        Some(e) => {
            prop_assert_eq!(finished, 0, "a message that failed also finished");
            prop_assert!(
                matches!(
                    e,
                    LlmError::Malformed(_)
                        | LlmError::Api { .. }
                        | LlmError::Stream(_)
                        | LlmError::TooLarge(_)
                ),
                "{:?}",
                e
            );
            prop_assert!(!e.to_string().is_empty());
        }
    }
    for e in &events {
        if let StreamEvent::BlockComplete(cairn::llm::ContentBlock::ToolUse { input, .. }) = e {
            prop_assert!(input.is_object());
        }
        prop_assert!(!matches!(e, StreamEvent::Restart(_)));
    }
    // Decoding is a function of its input.
    prop_assert_eq!(decode_frames(provider, frames), (events, err));
    Ok(())
}

#[test]
fn anthropic_decoder_gives_an_event_or_a_clear_error() {
    fuzz::fuzz("anthropic_decoder", frames(), |frames| {
        check_decoding(Provider::Anthropic, &frames)
    });
}

#[test]
fn openai_decoder_gives_an_event_or_a_clear_error() {
    fuzz::fuzz("openai_decoder", frames(), |frames| {
        check_decoding(Provider::OpenAi, &frames)
    });
}
