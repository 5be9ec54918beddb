//! Large tool results: one policy for every tool. A result longer than its tool's limit keeps
//! its head and tail with a `[... N characters truncated ...]` marker between them, and the
//! whole text is written to `<spill dir>/<call id>.txt` so the model can Read it (an existing
//! file is never overwritten: a second spill for the same call goes to `<call id>-2.txt`).
//!
//! Invariants: the returned text is never longer than `max_chars` characters (so applying the
//! policy twice changes nothing), cuts fall on char boundaries, and a failure to write the spill
//! file is reported in the result instead of being hidden or panicking.
//!
//! A result of several blocks ([`shape`]) is limited block by block: each text block as above,
//! while images and documents pass through whole unless [`attachment::check`] refuses them, in
//! which case a text block saying why takes their place.

use std::path::{Path, PathBuf};

use crate::llm::{ToolResultBlock, ToolResultContent};
use crate::tools::attachment;

/// A result after [`shape`]: the content for the model, and why any attachment was dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    pub content: ToolResultContent,
    pub dropped: Vec<String>,
}

/// Apply the policy to every block of a result: text blocks are limited to `max_chars` (when
/// the tool has a limit) with the spill file named after the call; attachments are checked.
/// A text-only result of one block is moved through, never copied.
pub fn shape(
    content: ToolResultContent,
    max_chars: Option<usize>,
    spill_dir: &Path,
    call_id: &str,
) -> Shaped {
    let mut dropped = Vec::new();
    let blocks = content
        .into_blocks()
        .into_iter()
        .map(|block| match block {
            ToolResultBlock::Text { text } => ToolResultBlock::Text {
                text: match max_chars {
                    Some(max) => limit_result(text, max, spill_dir, call_id),
                    None => text,
                },
            },
            other => match attachment::check(&other) {
                Ok(()) => other,
                Err(why) => {
                    dropped.push(why.clone());
                    ToolResultBlock::Text { text: why }
                }
            },
        })
        .collect();
    Shaped {
        content: ToolResultContent(blocks),
        dropped,
    }
}

/// Keep `content` within `max_chars` characters; past that keep head and tail and spill the
/// full text to `spill_dir/<call_id>.txt`, naming the file in a last line.
pub fn limit_result(content: String, max_chars: usize, spill_dir: &Path, call_id: &str) -> String {
    let total = content.chars().count();
    if total <= max_chars {
        return content;
    }
    let stem = safe_file_stem(call_id);
    let footer = match write_spill(spill_dir, &stem, &content) {
        Ok(path) => format!(
            "\n\nThe full output ({total} characters) was saved to {}. Read it with the Read \
             tool (use offset and limit), or search it with Grep.",
            path.display()
        ),
        Err(e) => format!(
            "\n\nThe full output ({total} characters) could not be saved to {}: {e}",
            spill_dir.join(format!("{stem}.txt")).display()
        ),
    };
    cut_middle(
        &content,
        total,
        max_chars.saturating_sub(footer.chars().count()),
    ) + &footer
}

/// Head and tail of `text` within `max_chars` characters, with a marker saying how much was
/// left out; `text` itself when it fits. For display copies that need no spill file.
pub fn head_tail(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    cut_middle(text, total, max_chars)
}

/// `text` (of `total` chars) cut to at most `budget` chars: 60% head, 40% tail (the end of a
/// command's output — test summaries, compiler errors — matters as much as its start).
fn cut_middle(text: &str, total: usize, budget: usize) -> String {
    // The marker's length depends on the number it carries; size it for the worst case.
    let marker_len = format!("\n\n[... {total} characters truncated ...]\n\n")
        .chars()
        .count();
    let keep = budget.saturating_sub(marker_len);
    let head_chars = keep * 3 / 5;
    let tail_chars = keep - head_chars;
    let head_end = byte_index_of_char(text, head_chars);
    let tail_start = byte_index_of_char(text, total - tail_chars);
    let omitted = total - head_chars - tail_chars;
    format!(
        "{}\n\n[... {omitted} characters truncated ...]\n\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// The byte offset of the `n`th char (or the end).
fn byte_index_of_char(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// Write `content` to `dir/<stem>.txt`, or `<stem>-2.txt`, ... when that exists: a result
/// shaped twice (a tool spilled, then a hook added text) must not overwrite the full output.
fn write_spill(dir: &Path, stem: &str, content: &str) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir)?;
    for n in 1..=100 {
        let path = if n == 1 {
            dir.join(format!("{stem}.txt"))
        } else {
            dir.join(format!("{stem}-{n}.txt"))
        };
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                f.write_all(content.as_bytes())?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("too many spill files for this call"))
}

/// Call ids come from the model's provider; keep only characters safe in a file name.
fn safe_file_stem(call_id: &str) -> String {
    let stem: String = call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "result".to_string()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_content_is_returned_unchanged_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("spill");
        assert_eq!(limit_result("hello".into(), 10, &spill, "c1"), "hello");
        assert!(!spill.exists());
    }

    #[test]
    fn long_content_keeps_head_and_tail_and_spills_everything() {
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("spill");
        let content: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let total = content.chars().count();
        let out = limit_result(content.clone(), 2_000, &spill, "toolu_01");
        assert!(out.chars().count() <= 2_000, "{}", out.chars().count());
        assert!(out.starts_with("line 0\nline 1\n"));
        let file = spill.join("toolu_01.txt");
        assert!(out.ends_with(&format!(
            "The full output ({total} characters) was saved to {}. Read it with the Read tool \
             (use offset and limit), or search it with Grep.",
            file.display()
        )));
        assert!(out.contains("line 9999\n\n\nThe full output"));
        assert!(out.contains(" characters truncated ...]"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), content);
        // Applying the policy again is a no-op.
        assert_eq!(limit_result(out.clone(), 2_000, &spill, "x"), out);
        // Shaping it again with more text never overwrites the full output.
        let again = limit_result(out.clone() + &"x".repeat(500), 2_000, &spill, "toolu_01");
        assert!(again.contains(&spill.join("toolu_01-2.txt").display().to_string()));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), content);
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        let text = "é".repeat(1000) + &"ü".repeat(1000);
        let out = head_tail(&text, 200);
        assert!(out.chars().count() <= 200);
        assert!(out.starts_with("éé"));
        assert!(out.ends_with("üü"));
        let marker_total = 2000 - out.chars().filter(|c| *c == 'é' || *c == 'ü').count();
        assert!(out.contains(&format!("[... {marker_total} characters truncated ...]")));
    }

    #[test]
    fn shaping_limits_text_blocks_and_keeps_images_whole() {
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("spill");
        let image = ToolResultBlock::image("image/png", "A".repeat(40_000));
        let content = ToolResultContent(vec![
            ToolResultBlock::Text {
                text: "x".repeat(5_000),
            },
            image.clone(),
            ToolResultBlock::image("image/bmp", "AAAA"),
        ]);
        let out = shape(content, Some(1_000), &spill, "c9");
        let blocks = out.content.blocks();
        let ToolResultBlock::Text { text } = &blocks[0] else {
            panic!("{blocks:?}");
        };
        assert!(text.chars().count() <= 1_000);
        assert!(text.contains(&spill.join("c9.txt").display().to_string()));
        assert_eq!(blocks[1], image);
        let why = "[image not sent: the media type \"image/bmp\" is not supported; use one of \
                   image/png, image/jpeg, image/gif, image/webp]";
        assert_eq!(blocks[2], ToolResultBlock::Text { text: why.into() });
        assert_eq!(out.dropped, vec![why.to_string()]);
        // Without a limit text passes as it is (Read limits itself).
        let long = ToolResultContent::from("y".repeat(50_000));
        assert_eq!(shape(long.clone(), None, &spill, "c10").content, long);
    }

    #[test]
    fn unwritable_spill_dir_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        let out = limit_result("a".repeat(5_000), 1_000, &blocker.join("spill"), "c/../1");
        assert!(out.chars().count() <= 1_000);
        assert!(out.contains("could not be saved to"), "{out}");
        assert!(out.contains("c____1.txt"), "{out}");
    }
}
