//! Images and documents in tool results: what the model APIs will take, and how one looks to
//! people.
//!
//! Limits (checked by the executor on every result, whatever the tool): an image must be PNG,
//! JPEG, GIF or WebP with at most [`MAX_IMAGE_BASE64`] characters of base64 (Anthropic refuses
//! larger images, and a refused block would make every later request of the conversation fail);
//! a document must be a PDF with at most [`MAX_DOCUMENT_BASE64`] characters (the whole request
//! limit). Data must be padded standard base64. A block that breaks a rule is replaced by a text
//! block saying why, so the model learns what happened and the conversation stays sendable.

use base64::Engine as _;

use crate::llm::ToolResultBlock;
use crate::protocol::Display;

/// 5 MiB of base64: the per-image limit of the Anthropic API.
pub const MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024;
/// 32 MiB of base64: the Anthropic API's limit for a whole request.
pub const MAX_DOCUMENT_BASE64: usize = 32 * 1024 * 1024;

pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
pub const DOCUMENT_TYPES: [&str; 1] = ["application/pdf"];

/// Why `block` cannot be sent, if it cannot. Text blocks always can.
pub fn check(block: &ToolResultBlock) -> Result<(), String> {
    let (kind, media_type, data, max, allowed): (_, _, _, _, &[&str]) = match block {
        ToolResultBlock::Text { .. } | ToolResultBlock::ToolReference { .. } => return Ok(()),
        ToolResultBlock::Image { media_type, data } => {
            ("image", media_type, data, MAX_IMAGE_BASE64, &IMAGE_TYPES)
        }
        ToolResultBlock::Document {
            media_type, data, ..
        } => (
            "document",
            media_type,
            data,
            MAX_DOCUMENT_BASE64,
            &DOCUMENT_TYPES,
        ),
    };
    if !allowed.contains(&media_type.as_str()) {
        return Err(format!(
            "[{kind} not sent: the media type {media_type:?} is not supported; use one of {}]",
            allowed.join(", ")
        ));
    }
    if data.len() > max {
        return Err(format!(
            "[{kind} not sent: {media_type}, {} bytes of base64, over the limit of {} bytes ({} MiB)]",
            data.len(),
            max,
            max / (1024 * 1024)
        ));
    }
    if !is_padded_base64(data) {
        return Err(format!(
            "[{kind} not sent: {media_type} data is not valid base64]"
        ));
    }
    Ok(())
}

/// A cheap shape check (alphabet, length, padding only at the end) that needs no decode buffer
/// for megabytes of data; the API does the full decode.
fn is_padded_base64(data: &str) -> bool {
    let bytes = data.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let body = bytes.len()
        - bytes
            .iter()
            .rev()
            .take(2)
            .take_while(|b| **b == b'=')
            .count();
    bytes[..body]
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
}

/// How an image or document block looks to people (`None` for text).
pub fn display(block: &ToolResultBlock) -> Option<Display> {
    let bytes = block.decoded_len();
    match block {
        ToolResultBlock::Text { .. } | ToolResultBlock::ToolReference { .. } => None,
        ToolResultBlock::Image { media_type, data } => {
            let size = dimensions(data);
            Some(Display::Attachment {
                media_type: media_type.clone(),
                bytes,
                width: size.map(|s| s.0),
                height: size.map(|s| s.1),
                title: None,
            })
        }
        ToolResultBlock::Document {
            media_type, title, ..
        } => Some(Display::Attachment {
            media_type: media_type.clone(),
            bytes,
            width: None,
            height: None,
            title: title.clone(),
        }),
    }
}

/// Pixel size from the image header, decoding only the first 64 KiB of base64 (enough for the
/// header of every supported format short of a JPEG with a huge EXIF block, which then has none).
fn dimensions(data: &str) -> Option<(u32, u32)> {
    let prefix = &data[..data.len().min(64 * 1024)];
    let prefix = &prefix[..prefix.len() / 4 * 4];
    let header = base64::engine::general_purpose::STANDARD
        .decode(prefix)
        .ok()?;
    let size = imagesize::blob_size(&header).ok()?;
    Some((
        u32::try_from(size.width).ok()?,
        u32::try_from(size.height).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// A PNG header (signature + IHDR) for a `w`×`h` image; enough for the size sniffing.
    fn png_header(w: u32, h: u32) -> Vec<u8> {
        let mut v = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        v
    }

    #[test]
    fn a_png_is_described_with_its_size_and_pixels() {
        let data = b64(&png_header(640, 480));
        let block = ToolResultBlock::image("image/png", data);
        assert_eq!(check(&block), Ok(()));
        assert_eq!(
            display(&block),
            Some(Display::Attachment {
                media_type: "image/png".into(),
                bytes: 33,
                width: Some(640),
                height: Some(480),
                title: None,
            })
        );
    }

    #[test]
    fn unsupported_oversized_and_malformed_blocks_are_refused_with_a_reason() {
        let svg = ToolResultBlock::image("image/svg+xml", "AAAA");
        assert!(
            check(&svg)
                .unwrap_err()
                .contains("\"image/svg+xml\" is not supported")
        );
        let big = ToolResultBlock::image("image/png", "A".repeat(MAX_IMAGE_BASE64 + 4));
        let e = check(&big).unwrap_err();
        assert!(e.contains("over the limit of 5242880 bytes (5 MiB)"), "{e}");
        let exactly = ToolResultBlock::image("image/png", "A".repeat(MAX_IMAGE_BASE64));
        assert_eq!(check(&exactly), Ok(()));
        for bad in ["AAA", "A=AA", "AA*A", "A==="] {
            let e = check(&ToolResultBlock::image("image/png", bad)).unwrap_err();
            assert!(e.contains("not valid base64"), "{bad}: {e}");
        }
        let doc = ToolResultBlock::Document {
            media_type: "application/pdf".into(),
            data: "JVBERi0=".into(),
            title: None,
        };
        assert_eq!(check(&doc), Ok(()));
    }

    #[test]
    fn an_unreadable_header_still_gets_a_size_line() {
        let block = ToolResultBlock::image("image/webp", b64(b"not an image"));
        let Some(Display::Attachment { width, bytes, .. }) = display(&block) else {
            panic!("no attachment display");
        };
        assert_eq!((width, bytes), (None, 12));
    }
}
