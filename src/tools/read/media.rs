//! Read's readers for files that are not plain text: images become an image block within the
//! token budget (downscaled as `media::image` decides), PDFs become text a page range at a time,
//! notebooks become their cells as text plus the images of their outputs. Binaries of other
//! kinds are refused naming their format.
//!
//! PDFs go to the model as extracted text on both wire formats, never as a `document` block: text
//! is bounded by the same token limit as any Read, the `pages` parameter means the same thing
//! everywhere, and OpenAI-compatible servers take no documents.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use super::ReadLimits;
use crate::files::encoding;
use crate::files::state::{ReadRecord, content_hash};
use crate::media::{Format, image, notebook, pdf};
use crate::protocol::Display;
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolResultBlock, attachment};

/// PDFs of more pages must be read with `pages`.
pub const PDF_WHOLE_MAX_PAGES: usize = 10;
/// Images and PDFs larger than this are not read at all.
pub const MAX_MEDIA_BYTES: u64 = 64 * 1024 * 1024;
/// At most this many images of a notebook's outputs are sent.
const MAX_NOTEBOOK_IMAGES: usize = 5;

/// A kind of file Read hands to a reader of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    Image,
    Pdf,
    Notebook,
}

impl MediaKind {
    /// By extension (`.png`, `.pdf`, `.ipynb`…). SVG is text.
    pub fn of_path(path: &Path) -> Option<MediaKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "png" | "jpg" | "jpeg" | "gif" | "webp" => Some(MediaKind::Image),
            "pdf" => Some(MediaKind::Pdf),
            "ipynb" => Some(MediaKind::Notebook),
            _ => None,
        }
    }

    /// Whether `path` names an image by its extension.
    pub fn is_image_path(path: &Path) -> bool {
        MediaKind::of_path(path) == Some(MediaKind::Image)
    }

    /// By magic number, for a file whose extension did not say.
    pub fn of_format(format: Format) -> Option<MediaKind> {
        match format {
            f if f.is_image() => Some(MediaKind::Image),
            Format::Pdf => Some(MediaKind::Pdf),
            _ => None,
        }
    }
}

/// The refusal of a binary file whose format is known.
pub fn binary_format_error(path: &Path, format: Format) -> ToolError {
    ToolError::new(format!(
        "{} is {}, not a text file; Read reads text, images, PDFs and notebooks. Use Bash (e.g. \
         `file`, `unzip -l`, `xxd | head`) to inspect it.",
        path.display(),
        format.describe()
    ))
}

/// The `pages` parameter, checked (for `validate`, before any I/O).
pub fn pdf_pages(text: &str) -> Result<pdf::PageRange, ToolError> {
    pdf::parse_pages(text).map_err(ToolError::new)
}

/// Read `path` (`size` bytes on disk) with the reader of `kind`.
pub async fn read(
    kind: MediaKind,
    path: &Path,
    size: u64,
    pages: Option<&str>,
    limits: ReadLimits,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    if pages.is_some() && kind != MediaKind::Pdf {
        return Err(ToolError::new(
            "The pages parameter is for PDF files only; for text files use offset and limit.",
        ));
    }
    // A notebook's size is mostly its output images, which are sent within their own budget:
    // the token limit applies to its text, not the 256 KB whole-file limit of plain text.
    if size > MAX_MEDIA_BYTES {
        return Err(ToolError::new(format!(
            "{} is {} MB; Read takes images, PDFs and notebooks up to {} MB.",
            path.display(),
            size.div_ceil(1024 * 1024),
            MAX_MEDIA_BYTES / (1024 * 1024)
        )));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| ToolError::new(format!("Cannot read {}: {e}", path.display())))?;
    match kind {
        MediaKind::Image => read_image(path, bytes, limits).await,
        MediaKind::Pdf => read_pdf(path, bytes, pages, limits).await,
        MediaKind::Notebook => read_notebook(path, bytes, size, limits, ctx),
    }
}

async fn read_image(
    path: &Path,
    bytes: Vec<u8>,
    limits: ReadLimits,
) -> Result<ToolOutput, ToolError> {
    let max_tokens = limits.max_tokens;
    let prepared = tokio::task::spawn_blocking(move || image::prepare(&bytes, max_tokens))
        .await
        .map_err(|e| ToolError::new(format!("Reading the image was interrupted: {e}")))?
        .map_err(|e| ToolError::new(format!("{}: {e}", path.display())))?;
    let (ow, oh) = prepared.original;
    let (sw, sh) = prepared.sent;
    let mut text = format!("Image {} ({ow}x{oh})", path.display());
    if prepared.original != prepared.sent {
        text.push_str(&format!(
            ", sent downscaled to {sw}x{sh} ({})",
            prepared.media_type
        ));
    }
    let block = ToolResultBlock::image(prepared.media_type, prepared.data);
    let display = image_display(&block, prepared.sent);
    Ok(ToolOutput::blocks(
        vec![ToolResultBlock::Text { text }, block],
        display,
    ))
}

/// The one-line attachment people see, with the pixels that were sent.
fn image_display(block: &ToolResultBlock, sent: (u32, u32)) -> Display {
    match attachment::display(block) {
        Some(Display::Attachment {
            media_type,
            bytes,
            title,
            ..
        }) => Display::Attachment {
            media_type,
            bytes,
            width: Some(sent.0),
            height: Some(sent.1),
            title,
        },
        other => other.unwrap_or(Display::Empty),
    }
}

async fn read_pdf(
    path: &Path,
    bytes: Vec<u8>,
    pages: Option<&str>,
    limits: ReadLimits,
) -> Result<ToolOutput, ToolError> {
    let range = pages.map(pdf_pages).transpose()?;
    let shown = path.display().to_string();
    let (count, text) = tokio::task::spawn_blocking(move || -> Result<_, String> {
        let doc = pdf::Pdf::load(&bytes)?;
        let count = doc.page_count();
        let range = match range {
            Some(r) => r,
            None if count <= PDF_WHOLE_MAX_PAGES => pdf::PageRange {
                first: 1,
                last: count.max(1),
            },
            None => {
                return Err(format!(
                    "This PDF has {count} pages, too many to read at once. Read it in parts \
                     with the pages parameter (e.g. pages: \"1-10\"), at most {} pages per call.",
                    pdf::MAX_PAGES_PER_READ
                ));
            }
        };
        Ok((count, pdf::render(&doc.pages_text(range)?)))
    })
    .await
    .map_err(|e| ToolError::new(format!("Reading the PDF was interrupted: {e}")))?
    .map_err(|e| ToolError::new(format!("{shown}: {e}")))?;
    limits.check_tokens(&text)?;
    let text = format!("PDF {shown} ({count} pages)\n\n{text}");
    let display = Display::Text {
        text: format!("Read PDF, {count} pages in all"),
    };
    Ok(ToolOutput::with_display(text, display))
}

fn read_notebook(
    path: &Path,
    bytes: Vec<u8>,
    size: u64,
    limits: ReadLimits,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let decoded = encoding::decode(&bytes);
    let book = notebook::Notebook::parse(&decoded.text)
        .map_err(|e| ToolError::new(format!("{}: {e}", path.display())))?;
    let text = book.render();
    limits.check_tokens(&text)?;
    let mut blocks = vec![ToolResultBlock::Text { text }];
    let images = book.images();
    let budget = limits.max_tokens / (images.len().clamp(1, MAX_NOTEBOOK_IMAGES) as u64 * 2);
    for img in images.iter().take(MAX_NOTEBOOK_IMAGES) {
        let raw = base64_decode(&img.base64);
        match raw.and_then(|b| image::prepare(&b, budget)) {
            Ok(p) => {
                blocks.push(ToolResultBlock::Text {
                    text: format!("Output image of cell {}:", img.cell_id),
                });
                blocks.push(ToolResultBlock::image(p.media_type, p.data));
            }
            Err(e) => blocks.push(ToolResultBlock::Text {
                text: format!(
                    "(the output image of cell {} was left out: {e})",
                    img.cell_id
                ),
            }),
        }
    }
    if images.len() > MAX_NOTEBOOK_IMAGES {
        blocks.push(ToolResultBlock::Text {
            text: format!(
                "({} more output images were left out.)",
                images.len() - MAX_NOTEBOOK_IMAGES
            ),
        });
    }
    // NotebookEdit, like Edit, needs the file read and unchanged since.
    let meta = std::fs::metadata(path).ok();
    let content: Arc<str> = Arc::from(decoded.text);
    ctx.session.read_files.record_read(
        path,
        ReadRecord {
            content: Some(content),
            mtime: meta
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH),
            size,
            hash: Some(content_hash(&bytes)),
            format: decoded.format,
            shown: None,
            offset: 1,
            limit: usize::MAX,
        },
    );
    let display = Display::Text {
        text: format!("Read notebook, {} cells", book.cell_count()),
    };
    Ok(ToolOutput::blocks(blocks, display))
}

fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| format!("its data is not base64 ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_extension_and_magic() {
        assert_eq!(
            MediaKind::of_path(Path::new("a/b.PNG")),
            Some(MediaKind::Image)
        );
        assert_eq!(MediaKind::of_path(Path::new("x.pdf")), Some(MediaKind::Pdf));
        assert_eq!(
            MediaKind::of_path(Path::new("n.ipynb")),
            Some(MediaKind::Notebook)
        );
        assert_eq!(MediaKind::of_path(Path::new("logo.svg")), None);
        assert_eq!(MediaKind::of_format(Format::Webp), Some(MediaKind::Image));
        assert_eq!(MediaKind::of_format(Format::Zip), None);
        let e = binary_format_error(Path::new("/p/a.bin"), Format::Elf).message;
        assert!(e.starts_with("/p/a.bin is an ELF executable or library, not a text file"));
    }
}
