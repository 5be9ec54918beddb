//! `@path` in a prompt: each mention of an existing file or directory inside the working
//! directories is attached to the prompt as Read would show it (text with line numbers, an
//! image, a PDF's text, a notebook, a directory listing), in the TUI and headless alike, since
//! both submit prompts to the core. A mention that names nothing on disk is left as text (it may
//! be a handle, `@alice`); one a deny rule covers, or outside the working directories, is not
//! read, and the person is told.

use std::path::PathBuf;
use std::sync::Arc;

use crate::files::paths::expand_path;
use crate::llm::{ContentBlock, ToolResultBlock};
use crate::permissions::PermissionGate;
use crate::session::context::SessionContext;
use crate::tools::read::{MediaKind, attach};

/// At most this many mentions of one prompt are attached.
const MAX_ATTACHMENTS: usize = 10;

/// The `@` mentions of `prompt`, in order, each once: an `@` at the start or after whitespace,
/// up to the next whitespace, without trailing punctuation (`@src/main.rs,` → `src/main.rs`), or
/// a quoted path (`@"Screen Shot 1.png"`).
pub fn mentions(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = prompt;
    while let Some(at) = rest.find('@') {
        let starts_word = rest[..at].chars().last().is_none_or(char::is_whitespace);
        let after = &rest[at + 1..];
        let (token, next) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => ("", quoted),
            },
            None => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                let word = &after[..end];
                let trimmed = word.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']);
                (trimmed, &after[end..])
            }
        };
        if starts_word && !token.is_empty() && !out.iter().any(|t| t == token) {
            out.push(token.to_string());
        }
        rest = next;
    }
    out
}

/// The blocks to send after the prompt, and notices for the person: what was attached, and
/// mentions that were not.
pub async fn expand(
    prompt: &str,
    session: &Arc<SessionContext>,
    gate: &PermissionGate,
) -> (Vec<ContentBlock>, Vec<String>) {
    let mut blocks = Vec::new();
    let mut notices = Vec::new();
    let cwd = session.cwd();
    for token in mentions(prompt).into_iter().take(MAX_ATTACHMENTS) {
        let Ok(path) = expand_path(&token, &cwd) else {
            continue;
        };
        if !path.exists() {
            continue;
        }
        if gate.read_denied(&path) {
            notices.push(format!("@{token} was not attached: a deny rule covers it."));
            continue;
        }
        // An image outside the working directories is attached in the TUI, where a person
        // pasted or typed it; never from a headless prompt, which a script may have built from
        // untrusted text.
        let pasted_image = MediaKind::is_image_path(&path) && gate.is_interactive();
        if !(pasted_image || inside(&path, &session.working_dirs())) {
            notices.push(format!(
                "@{token} was not attached: it is outside the working directories (--add-dir \
                 adds a directory)."
            ));
            continue;
        }
        match attach(&path, session).await {
            Ok(read) => {
                notices.push(format!(
                    "Attached @{token} ({})",
                    read.summary.to_lowercase()
                ));
                blocks.extend(as_prompt_blocks(&token, read.blocks));
            }
            Err(e) => notices.push(format!("@{token} was not attached: {e}")),
        }
    }
    (blocks, notices)
}

/// Whether `path` (resolved) is inside one of `dirs` (resolved).
fn inside(path: &std::path::Path, dirs: &[PathBuf]) -> bool {
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    dirs.iter()
        .filter_map(|d| d.canonicalize().ok())
        .any(|d| real.starts_with(d))
}

/// What Read returned, as blocks of the person's message: a heading naming the mention, then
/// the text and images.
fn as_prompt_blocks(token: &str, read: Vec<ToolResultBlock>) -> Vec<ContentBlock> {
    let mut out = Vec::new();
    let mut text = format!("Attached with @{token}:");
    for block in read {
        match block {
            ToolResultBlock::Text { text: t } => {
                text.push_str("\n\n");
                text.push_str(&t);
            }
            ToolResultBlock::Image { media_type, data } => {
                out.push(ContentBlock::Text {
                    text: std::mem::take(&mut text),
                });
                out.push(ContentBlock::image(media_type, data));
            }
            ToolResultBlock::Document { .. } | ToolResultBlock::ToolReference { .. } => {}
        }
    }
    if !text.is_empty() {
        out.push(ContentBlock::Text { text });
    }
    out
}

/// A client's attachment ([`crate::protocol::PromptAttachment`]) as a block of the user turn: an image as an
/// image block when its type and size are ones the model takes (else a note saying why not), a
/// text inside a `<context>` element naming its source.
pub fn attachment_block(attachment: crate::protocol::PromptAttachment) -> ContentBlock {
    use crate::protocol::PromptAttachment;
    match attachment {
        PromptAttachment::Image { media_type, data } => {
            let block = ToolResultBlock::image(media_type.clone(), data.clone());
            match crate::tools::attachment::check(&block) {
                Ok(()) => ContentBlock::image(media_type, data),
                Err(why) => ContentBlock::Text { text: why },
            }
        }
        PromptAttachment::Text { source, text } => ContentBlock::Text {
            text: format!("<context source=\"{source}\">\n{text}\n</context>"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_words_that_start_with_at() {
        assert_eq!(
            mentions("look at @src/main.rs, then @docs/ and mail@example.com @src/main.rs."),
            ["src/main.rs", "docs/"]
        );
        assert!(mentions("no mentions @ here").is_empty());
        assert_eq!(
            mentions("see @\"/tmp/Screen Shot 1.png\" and @a.rs"),
            ["/tmp/Screen Shot 1.png", "a.rs"]
        );
    }

    #[test]
    fn a_clients_attachments_become_blocks_of_the_turn() {
        use crate::protocol::PromptAttachment;
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        assert_eq!(
            attachment_block(PromptAttachment::Image {
                media_type: "image/png".into(),
                data: png.into()
            }),
            ContentBlock::image("image/png", png)
        );
        // A type the model does not take is named, not sent.
        let ContentBlock::Text { text } = attachment_block(PromptAttachment::Image {
            media_type: "image/tiff".into(),
            data: png.into(),
        }) else {
            panic!("a note expected");
        };
        assert!(text.contains("image/tiff"), "{text}");
        assert_eq!(
            attachment_block(PromptAttachment::Text {
                source: "file:///w/a.md".into(),
                text: "hello".into()
            }),
            ContentBlock::Text {
                text: "<context source=\"file:///w/a.md\">\nhello\n</context>".into()
            }
        );
    }
}
