//! The content of a tool result: an ordered list of blocks (text, base64 image, base64
//! document), shared by the tool layer (`ToolOutput`) and the conversation (`ContentBlock::ToolResult`)
//! so a result reaches the wire without being copied or converted.
//!
//! The serde form is Anthropic's `tool_result.content`, which is also what transcripts and
//! stream-json store: a result that is exactly one text block is a plain JSON string (so request
//! bodies and transcripts of text-only results are what they were before blocks existed, and
//! older transcripts read back), anything else is an array of `{type:"text"}`,
//! `{type:"image", source:{type:"base64", media_type, data}}` and
//! `{type:"document", source:{...}, title?}` blocks, and `{type:"tool_reference", tool_name}`
//! (ToolSearch naming a deferred tool it loaded; request builders keep or drop these per
//! endpoint, see `agent::deferral`).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One block of a tool result. Image and document data is base64 (standard alphabet, padded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolResultBlock {
    Text {
        text: String,
    },
    Image {
        media_type: String,
        data: String,
    },
    Document {
        media_type: String,
        data: String,
        title: Option<String>,
    },
    /// A deferred tool ToolSearch loaded: the API expands it into the tool's definition.
    ToolReference {
        tool_name: String,
    },
}

impl ToolResultBlock {
    pub fn image(media_type: impl Into<String>, data: impl Into<String>) -> ToolResultBlock {
        ToolResultBlock::Image {
            media_type: media_type.into(),
            data: data.into(),
        }
    }

    /// How many bytes the base64 `data` of an image or document decodes to (0 for text).
    pub fn decoded_len(&self) -> u64 {
        match self {
            ToolResultBlock::Text { .. } | ToolResultBlock::ToolReference { .. } => 0,
            ToolResultBlock::Image { data, .. } | ToolResultBlock::Document { data, .. } => {
                base64_decoded_len(data)
            }
        }
    }
}

/// The decoded size of padded base64 text, without decoding it.
pub fn base64_decoded_len(data: &str) -> u64 {
    let padding = data.bytes().rev().take(2).filter(|b| *b == b'=').count();
    ((data.len() / 4 * 3) as u64).saturating_sub(padding as u64)
}

/// The blocks of one tool result, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolResultContent(pub Vec<ToolResultBlock>);

impl ToolResultContent {
    pub fn blocks(&self) -> &[ToolResultBlock] {
        &self.0
    }

    pub fn into_blocks(self) -> Vec<ToolResultBlock> {
        self.0
    }

    /// True when no block is an image or document.
    pub fn is_text_only(&self) -> bool {
        self.0.iter().all(|b| {
            matches!(
                b,
                ToolResultBlock::Text { .. } | ToolResultBlock::ToolReference { .. }
            )
        })
    }

    /// The names of the tools this result references (a ToolSearch result).
    pub fn tool_references(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|b| match b {
            ToolResultBlock::ToolReference { tool_name } => Some(tool_name.as_str()),
            _ => None,
        })
    }

    /// The text blocks joined by blank lines; borrowed (no copy) for the common single block.
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = self.0.iter().filter_map(|b| match b {
            ToolResultBlock::Text { text } => Some(text.as_str()),
            _ => None,
        });
        let Some(first) = texts.next() else {
            return Cow::Borrowed("");
        };
        match texts.next() {
            None => Cow::Borrowed(first),
            Some(second) => {
                let mut joined = format!("{first}\n\n{second}");
                for t in texts {
                    joined.push_str("\n\n");
                    joined.push_str(t);
                }
                Cow::Owned(joined)
            }
        }
    }

    /// The text blocks joined, taking a single block's string without a copy.
    pub fn into_text(self) -> String {
        match <[ToolResultBlock; 1]>::try_from(self.0) {
            Ok([ToolResultBlock::Text { text }]) => text,
            Ok(other) => ToolResultContent(other.into()).text().into_owned(),
            Err(blocks) => ToolResultContent(blocks).text().into_owned(),
        }
    }

    /// Append text to the result (hook feedback, notes): to the last block when that is
    /// text, else as a new text block after the attachments.
    pub fn push_str(&mut self, s: &str) {
        match self.0.last_mut() {
            Some(ToolResultBlock::Text { text }) => text.push_str(s),
            _ => self.0.push(ToolResultBlock::Text {
                text: s.to_string(),
            }),
        }
    }
}

impl From<String> for ToolResultContent {
    fn from(text: String) -> Self {
        ToolResultContent(vec![ToolResultBlock::Text { text }])
    }
}

impl From<&str> for ToolResultContent {
    fn from(text: &str) -> Self {
        ToolResultContent::from(text.to_string())
    }
}

impl From<Vec<ToolResultBlock>> for ToolResultContent {
    fn from(blocks: Vec<ToolResultBlock>) -> Self {
        ToolResultContent(blocks)
    }
}

/// The wire shape of a block, borrowed for serialising (no copy of base64 data).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum WireRef<'a> {
    Text {
        text: &'a str,
    },
    Image {
        source: SourceRef<'a>,
    },
    Document {
        source: SourceRef<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
    },
    #[serde(rename = "tool_reference")]
    ToolReference {
        tool_name: &'a str,
    },
}

#[derive(Serialize)]
struct SourceRef<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Wire {
    Text {
        text: String,
    },
    Image {
        source: Source,
    },
    Document {
        source: Source,
        #[serde(default)]
        title: Option<String>,
    },
    #[serde(rename = "tool_reference")]
    ToolReference {
        tool_name: String,
    },
}

#[derive(Deserialize)]
struct Source {
    #[serde(rename = "type")]
    kind: String,
    media_type: String,
    data: String,
}

impl Source {
    fn checked<E: serde::de::Error>(self) -> Result<(String, String), E> {
        if self.kind != "base64" {
            return Err(E::custom(format!(
                "unsupported {} source; only base64 is stored",
                self.kind
            )));
        }
        Ok((self.media_type, self.data))
    }
}

impl Serialize for ToolResultBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolResultBlock::Text { text } => WireRef::Text { text },
            ToolResultBlock::Image { media_type, data } => WireRef::Image {
                source: SourceRef {
                    kind: "base64",
                    media_type,
                    data,
                },
            },
            ToolResultBlock::Document {
                media_type,
                data,
                title,
            } => WireRef::Document {
                source: SourceRef {
                    kind: "base64",
                    media_type,
                    data,
                },
                title: title.as_deref(),
            },
            ToolResultBlock::ToolReference { tool_name } => WireRef::ToolReference { tool_name },
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolResultBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Wire::deserialize(deserializer)? {
            Wire::Text { text } => ToolResultBlock::Text { text },
            Wire::Image { source } => {
                let (media_type, data) = source.checked()?;
                ToolResultBlock::Image { media_type, data }
            }
            Wire::Document { source, title } => {
                let (media_type, data) = source.checked()?;
                ToolResultBlock::Document {
                    media_type,
                    data,
                    title,
                }
            }
            Wire::ToolReference { tool_name } => ToolResultBlock::ToolReference { tool_name },
        })
    }
}

impl Serialize for ToolResultContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [] => serializer.serialize_str(""),
            [ToolResultBlock::Text { text }] => serializer.serialize_str(text),
            blocks => blocks.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ToolResultContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Text(String),
            Blocks(Vec<ToolResultBlock>),
        }
        Ok(match Either::deserialize(deserializer)? {
            Either::Text(text) => ToolResultContent::from(text),
            Either::Blocks(blocks) => ToolResultContent(blocks),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mixed() -> ToolResultContent {
        ToolResultContent(vec![
            ToolResultBlock::Text {
                text: "a chart".into(),
            },
            ToolResultBlock::image("image/png", "iVBORw0KGgo="),
            ToolResultBlock::Document {
                media_type: "application/pdf".into(),
                data: "JVBERi0=".into(),
                title: Some("report.pdf".into()),
            },
        ])
    }

    #[test]
    fn one_text_block_is_a_plain_string_and_reads_back() {
        let c = ToolResultContent::from("hello");
        assert_eq!(serde_json::to_value(&c).unwrap(), json!("hello"));
        let back: ToolResultContent = serde_json::from_value(json!("hello")).unwrap();
        assert_eq!(back, c);
        assert_eq!(
            serde_json::to_value(ToolResultContent::default()).unwrap(),
            json!("")
        );
    }

    #[test]
    fn a_text_only_tool_result_block_serialises_to_the_same_bytes_as_before_blocks() {
        // The exact text the request body and the transcript held when content was a String.
        let block = crate::llm::ContentBlock::ToolResult {
            tool_use_id: "toolu_1".into(),
            content: "line \"1\"\n".into(),
            is_error: true,
        };
        assert_eq!(
            serde_json::to_string(&block).unwrap(),
            r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"line \"1\"\n","is_error":true}"#
        );
    }

    #[test]
    fn blocks_serialise_in_anthropic_shape_and_round_trip() {
        let c = mixed();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(
            v,
            json!([
                {"type": "text", "text": "a chart"},
                {"type": "image", "source":
                    {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "document", "title": "report.pdf", "source":
                    {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}},
            ])
        );
        let back: ToolResultContent = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn tool_references_serialise_in_anthropic_shape_and_round_trip() {
        let c = ToolResultContent(vec![
            ToolResultBlock::ToolReference {
                tool_name: "mcp__s__echo".into(),
            },
            ToolResultBlock::Text {
                text: "schemas".into(),
            },
        ]);
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(
            v,
            json!([{"type": "tool_reference", "tool_name": "mcp__s__echo"},
                   {"type": "text", "text": "schemas"}])
        );
        assert_eq!(serde_json::from_value::<ToolResultContent>(v).unwrap(), c);
        assert_eq!(c.tool_references().collect::<Vec<_>>(), ["mcp__s__echo"]);
        assert_eq!(c.text(), "schemas");
    }

    #[test]
    fn non_base64_sources_and_unknown_blocks_are_refused() {
        let url = json!([{"type": "image", "source": {"type": "url", "media_type": "image/png",
                          "data": "x"}}]);
        assert!(serde_json::from_value::<ToolResultContent>(url).is_err());
        let other = json!([{"type": "video", "data": "x"}]);
        assert!(serde_json::from_value::<ToolResultContent>(other).is_err());
    }

    #[test]
    fn text_borrows_a_single_block_and_joins_several() {
        let one = ToolResultContent::from("only");
        assert!(matches!(one.text(), Cow::Borrowed("only")));
        let mut c = mixed();
        c.push_str("note");
        assert_eq!(c.text(), "a chart\n\nnote");
        assert!(!c.is_text_only());
        assert_eq!(c.blocks().len(), 4);
    }

    #[test]
    fn decoded_length_accounts_for_padding() {
        use base64::Engine as _;
        for n in 0..10 {
            let data = base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
            assert_eq!(base64_decoded_len(&data), n as u64, "{data}");
        }
    }
}
