//! An ACP prompt (content blocks) as what cairn's core takes: the text, with a link to a local
//! file written as an `@"path"` mention (the core attaches it as Read would show it, deny rules
//! and working directories respected), and images and embedded resources as
//! [`PromptAttachment`]s. What the model cannot take (audio, binary resources other than
//! images) is named in the text rather than dropped silently.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

use crate::protocol::{Op, PromptAttachment};

/// The op that submits `blocks`.
pub fn submit(blocks: Vec<ContentBlock>) -> Op {
    let mut text = String::new();
    let mut attachments = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => push(&mut text, &t.text),
            ContentBlock::Image(image) => attachments.push(PromptAttachment::Image {
                media_type: image.mime_type,
                data: image.data,
            }),
            ContentBlock::ResourceLink(link) => match file_path(&link.uri) {
                Some(path) => push(&mut text, &format!("@\"{path}\"")),
                None => push(&mut text, &format!("[{}]({})", link.name, link.uri)),
            },
            ContentBlock::Resource(resource) => match resource.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    attachments.push(PromptAttachment::Text {
                        source: r.uri,
                        text: r.text,
                    })
                }
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    match r.mime_type.filter(|m| m.starts_with("image/")) {
                        Some(media_type) => attachments.push(PromptAttachment::Image {
                            media_type,
                            data: r.blob,
                        }),
                        None => push(
                            &mut text,
                            &format!("({} was attached as binary data, which is not sent)", r.uri),
                        ),
                    }
                }
                _ => {}
            },
            ContentBlock::Audio(_) => push(&mut text, "(an audio clip was attached; not sent)"),
            _ => {}
        }
    }
    if attachments.is_empty() {
        Op::Submit { text }
    } else {
        Op::SubmitWith { text, attachments }
    }
}

/// A prompt cairn answers itself rather than the model: the TUI's `/clear` and `/compact`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalCommand {
    Clear,
    Compact { instructions: Option<String> },
}

/// The local command `text` is, if it is one: `/clear`, or `/compact` with optional
/// instructions for the summary.
pub fn local_command(text: &str) -> Option<LocalCommand> {
    let text = text.trim();
    let (name, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    match name {
        "/clear" if rest.trim().is_empty() => Some(LocalCommand::Clear),
        "/compact" => Some(LocalCommand::Compact {
            instructions: Some(rest.trim().to_string()).filter(|r| !r.is_empty()),
        }),
        _ => None,
    }
}

/// Blocks join with a space, as an editor's chips sit in a line of text.
fn push(text: &mut String, part: &str) {
    if !text.is_empty() && !text.ends_with(char::is_whitespace) {
        text.push(' ');
    }
    text.push_str(part);
}

/// The local path of a `file://` URI (percent-decoded), if it is one; a path with a `"` in it
/// cannot be mentioned and is not.
fn file_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`) is ours.
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if &rest[..i] == "localhost" => &rest[i..],
        _ => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let decoded = percent_decode(path)?;
    (!decoded.contains('"')).then_some(decoded)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{
        BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink, TextContent,
        TextResourceContents,
    };

    use super::*;

    #[test]
    fn text_alone_is_a_plain_submit() {
        let op = submit(vec![ContentBlock::Text(TextContent::new("fix the bug"))]);
        assert_eq!(
            op,
            Op::Submit {
                text: "fix the bug".into()
            }
        );
    }

    #[test]
    fn links_images_and_resources_become_mentions_and_attachments() {
        let op = submit(vec![
            ContentBlock::Text(TextContent::new("look at")),
            ContentBlock::ResourceLink(ResourceLink::new(
                "my file.rs",
                "file:///work/src/my%20file.rs",
            )),
            ContentBlock::ResourceLink(ResourceLink::new("docs", "https://example.com/x")),
            ContentBlock::Image(ImageContent::new("aGk=", "image/png")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///work/src/main.rs",
                )),
            )),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::BlobResourceContents(BlobResourceContents::new(
                    "AAAA",
                    "file:///work/a.bin",
                )),
            )),
        ]);
        let Op::SubmitWith { text, attachments } = op else {
            panic!("attachments expected: {op:?}");
        };
        assert_eq!(
            text,
            "look at @\"/work/src/my file.rs\" [docs](https://example.com/x) \
             (file:///work/a.bin was attached as binary data, which is not sent)"
        );
        assert_eq!(
            attachments,
            vec![
                PromptAttachment::Image {
                    media_type: "image/png".into(),
                    data: "aGk=".into()
                },
                PromptAttachment::Text {
                    source: "file:///work/src/main.rs".into(),
                    text: "fn main() {}".into()
                },
            ]
        );
    }

    #[test]
    fn clear_and_compact_are_answered_by_cairn() {
        assert_eq!(local_command(" /clear "), Some(LocalCommand::Clear));
        assert_eq!(
            local_command("/compact"),
            Some(LocalCommand::Compact { instructions: None })
        );
        assert_eq!(
            local_command("/compact keep the test names"),
            Some(LocalCommand::Compact {
                instructions: Some("keep the test names".into())
            })
        );
        assert_eq!(local_command("/clear everything"), None);
        assert_eq!(local_command("/clearly"), None);
        assert_eq!(local_command("please /clear"), None);
    }

    #[test]
    fn only_local_file_uris_are_paths() {
        assert_eq!(file_path("file:///a/b"), Some("/a/b".into()));
        assert_eq!(file_path("file://localhost/a/b"), Some("/a/b".into()));
        assert_eq!(file_path("file://evil.example/a"), None);
        assert_eq!(file_path("file:///a/%zz"), None);
        assert_eq!(file_path("file:///a/%22quoted%22"), None);
        assert_eq!(file_path("https://x/a"), None);
    }
}
