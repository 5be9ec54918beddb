//! File formats that are not plain text, as pure functions over bytes: what a file is by its
//! magic number ([`sniff`]), and (in the submodules) images prepared for a model within a token
//! budget, PDF text by page, and Jupyter notebooks read and edited. Nothing here touches the
//! disk or knows a tool; the Read and NotebookEdit tools use it.

pub mod ansi;
pub mod image;
pub mod notebook;
pub mod pdf;

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
    Pdf,
    Zip,
    Gzip,
    Elf,
    MachO,
    WindowsExe,
    Wasm,
    Sqlite,
}

impl Format {
    /// An image a model can be sent.
    pub fn is_image(self) -> bool {
        matches!(
            self,
            Format::Png | Format::Jpeg | Format::Gif | Format::Webp
        )
    }

    /// The MIME type of an image or a PDF.
    pub fn media_type(self) -> Option<&'static str> {
        match self {
            Format::Png => Some("image/png"),
            Format::Jpeg => Some("image/jpeg"),
            Format::Gif => Some("image/gif"),
            Format::Webp => Some("image/webp"),
            Format::Pdf => Some("application/pdf"),
            _ => None,
        }
    }

    /// What to call it in a message (`a ZIP archive`).
    pub fn describe(self) -> &'static str {
        match self {
            Format::Png => "a PNG image",
            Format::Jpeg => "a JPEG image",
            Format::Gif => "a GIF image",
            Format::Webp => "a WebP image",
            Format::Pdf => "a PDF document",
            Format::Zip => "a ZIP archive (or a format built on it: jar, docx, xlsx…)",
            Format::Gzip => "a gzip archive",
            Format::Elf => "an ELF executable or library",
            Format::MachO => "a Mach-O executable or library",
            Format::WindowsExe => "a Windows executable",
            Format::Wasm => "a WebAssembly module",
            Format::Sqlite => "an SQLite database",
        }
    }
}

/// The format of `bytes` by its magic number, if it is one this module knows.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    const MAGIC: &[(&[u8], Format)] = &[
        (b"\x89PNG\r\n\x1a\n", Format::Png),
        (b"\xff\xd8\xff", Format::Jpeg),
        (b"GIF87a", Format::Gif),
        (b"GIF89a", Format::Gif),
        (b"%PDF-", Format::Pdf),
        (b"PK\x03\x04", Format::Zip),
        (b"PK\x05\x06", Format::Zip),
        (b"\x1f\x8b\x08", Format::Gzip),
        (b"\x7fELF", Format::Elf),
        (b"\xcf\xfa\xed\xfe", Format::MachO),
        (b"\xce\xfa\xed\xfe", Format::MachO),
        (b"\xca\xfe\xba\xbe", Format::MachO),
        (b"\0asm", Format::Wasm),
        (b"SQLite format 3\0", Format::Sqlite),
    ];
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some(Format::Webp);
    }
    // `MZ` alone could start a text file; an executable's header holds NUL bytes.
    if bytes.starts_with(b"MZ") && bytes.iter().take(64).any(|b| *b == 0) {
        return Some(Format::WindowsExe);
    }
    MAGIC
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map(|(_, f)| *f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some(Format::Png));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0"), Some(Format::Jpeg));
        assert_eq!(sniff(b"GIF89a.."), Some(Format::Gif));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some(Format::Webp));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"%PDF-1.7\n"), Some(Format::Pdf));
        assert_eq!(sniff(b"PK\x03\x04"), Some(Format::Zip));
        assert_eq!(sniff(b"\x7fELF\x02"), Some(Format::Elf));
        assert_eq!(sniff(b"fn main() {}"), None);
        assert_eq!(sniff(b"MZ\x90\0\x03\0"), Some(Format::WindowsExe));
        assert_eq!(sniff(b"MZ is a text file"), None);
        assert!(Format::Webp.is_image() && !Format::Pdf.is_image());
    }
}
