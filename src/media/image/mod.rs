//! Image budget: turning the bytes of an image file into an image block the
//! model API accepts, within a token budget.
//!
//! This module owns the whole decision of what is sent for an image: which
//! files count as images (by magic number, not by extension), how decoding is
//! bounded so a hostile file cannot exhaust memory or crash the agent, and the
//! ladder of ever cheaper encodings tried until the estimated token cost
//! (`ceil(base64_len / 8)`) fits the budget: the original bytes unchanged, a
//! re-encode in the original format with the long side at most [`MAX_SIDE`],
//! JPEG at lower quality and size, and a last resort of a 400x400 JPEG at
//! quality 20. It does no I/O; the Read tool hands it bytes and a budget.

use std::borrow::Cow;
use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::codecs::png::PngEncoder;
use image::metadata::Orientation;
use image::{
    ColorType, DynamicImage, GenericImageView, ImageDecoder, ImageError, ImageFormat, ImageReader,
    Limits, Rgb, RgbImage,
};

mod jpeg_cost;
mod png_stream;
mod resize;

use jpeg_cost::{JpegCost, pixels};
#[cfg(test)]
use resize::resize_to;
use resize::{downscale, fit_within};

/// Long side of an image sent to the model, at most.
pub const MAX_SIDE: u32 = 2000;

/// Width or height beyond which a file is refused before it is decoded.
const MAX_DECODE_SIDE: u32 = 20_000;
/// Memory the decoder may allocate for one image, output buffer included.
const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;
/// JPEG quality of the standard re-encode.
const STANDARD_JPEG_QUALITY: u8 = 85;
/// Long sides tried by the aggressive step after the standard size.
const AGGRESSIVE_SIDES: [u32; 3] = [1600, 1200, 800];
/// JPEG qualities tried at each size of the aggressive step, best first,
/// each with its typical size relative to quality 80 (measured on photos,
/// noise and gradients: lower quality seldom shrinks a JPEG more than this).
const AGGRESSIVE_QUALITIES: [(u8, f64); 3] = [(80, 1.0), (60, 0.68), (40, 0.5)];
/// Typical size of the standard JPEG (quality 85) relative to quality 80.
const STANDARD_JPEG_FACTOR: f64 = 1.17;
/// Long side and JPEG quality of the last resort.
const LAST_RESORT_SIDE: u32 = 400;
const LAST_RESORT_QUALITY: u8 = 20;
/// How many times over the budget a PNG re-encode is predicted to be before it is not tried.
const HOPELESS_FACTOR: u64 = 8;
/// The error when a decoder panics on a file.
const DECODER_PANICKED: &str = "The image could not be decoded: the decoder failed on it";
/// The error for bytes that are none of the four formats.
const NOT_AN_IMAGE: &str = "not a PNG, JPEG, GIF or WebP image";

/// What an image that fits the budget looks like when sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// Base64 (standard alphabet, padded) of the bytes sent.
    pub data: String,
    /// Pixels of the original, and of what is sent.
    ///
    /// `original` is as stored in the file. When the image is re-encoded,
    /// its EXIF orientation is applied first (the re-encode drops the EXIF),
    /// so `sent` of a rotated photo has width and height swapped.
    pub original: (u32, u32),
    pub sent: (u32, u32),
}

/// How a candidate is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Png,
    Jpeg(u8),
}

impl Encoding {
    /// The media type of what this encoding writes.
    fn media_type(self) -> &'static str {
        match self {
            Encoding::Png => "image/png",
            Encoding::Jpeg(_) => "image/jpeg",
        }
    }
}

/// The media type of an image by its magic number (PNG, JPEG, GIF, WebP), if it is one.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    super::sniff(bytes)
        .filter(|f| f.is_image())
        .and_then(|f| f.media_type())
}

/// Estimated tokens of sending `base64_len` characters of base64: ceil(len * 0.125).
pub fn estimate_tokens(base64_len: usize) -> u64 {
    (base64_len as u64).div_ceil(8)
}

/// Prepare `bytes` for the model within `max_tokens` (estimated as above).
/// Errors are one-line messages for the model (e.g. "The image could not be decoded: ...").
pub fn prepare(bytes: &[u8], max_tokens: u64) -> Result<PreparedImage, String> {
    let media_type = sniff(bytes).ok_or_else(|| NOT_AN_IMAGE.to_string())?;
    let format = image_format(media_type);
    let original = read_dimensions(bytes, format)?;
    check_decodable(original)?;
    // Decoded even when the original is sent, so a corrupt file is refused
    // here rather than by the API (where it would break the conversation).
    let base = match shrunk_png(bytes, format, original)? {
        Some(base) => base,
        None => {
            let image = decode(bytes, format, original)?;
            if sends_original(bytes, media_type, original, max_tokens) {
                return Ok(prepared(media_type, bytes, original, original));
            }
            let image = into_8bit(image);
            downscale(&image, MAX_SIDE).unwrap_or(image)
        }
    };
    let encoding = standard_encoding(bytes, media_type);
    if png_is_hopeless(bytes, media_type, original, base.dimensions(), max_tokens) {
        return shrink_to_jpeg(&base, original, max_tokens, JpegCost::default());
    }
    let standard = encode(&base, encoding)?;
    if fits(standard.len(), max_tokens) {
        let media_type = encoding.media_type();
        return Ok(prepared(media_type, &standard, original, base.dimensions()));
    }
    let mut cost = JpegCost::default();
    if let Encoding::Jpeg(_) = encoding {
        let tokens = tokens_of(standard.len());
        cost.learn(base.dimensions(), STANDARD_JPEG_FACTOR, tokens);
    }
    shrink_to_jpeg(&base, original, max_tokens, cost)
}

/// A PNG too large to be sent as it is, decoded straight to the standard size (see
/// `png_stream.rs`); `None` when it is not a PNG or not a case that streams.
fn shrunk_png(
    bytes: &[u8],
    format: ImageFormat,
    original: (u32, u32),
) -> Result<Option<DynamicImage>, String> {
    if format != ImageFormat::Png || original.0.max(original.1) <= MAX_SIDE {
        return Ok(None);
    }
    let target = fit_within(original, MAX_SIDE);
    guarded(|| png_stream::decode_shrunk(bytes, original, target, MAX_DECODE_ALLOC))?.transpose()
}

/// Whether re-encoding a PNG at the standard size cannot fit the budget, so the PNG step is
/// skipped: a PNG's bytes per pixel change little with a downscale (averaging smooths noise,
/// but seldom by more than a few times), and this predicts over [`HOPELESS_FACTOR`] times
/// the budget. A noisy 38 MB photo saved as PNG skips a ~4 MB encode this way.
fn png_is_hopeless(
    bytes: &[u8],
    media_type: &str,
    original: (u32, u32),
    sent: (u32, u32),
    max_tokens: u64,
) -> bool {
    let predicted = bytes.len() as f64 * pixels(sent) / pixels(original).max(1.0);
    media_type == "image/png"
        && tokens_of(predicted as usize) > max_tokens.saturating_mul(HOPELESS_FACTOR)
}

/// Whether the original bytes are sent as they are: a format sent whole, no
/// side over [`MAX_SIDE`], and within the budget.
fn sends_original(bytes: &[u8], media_type: &str, original: (u32, u32), max_tokens: u64) -> bool {
    can_send_unchanged(bytes, media_type)
        && original.0.max(original.1) <= MAX_SIDE
        && fits(bytes.len(), max_tokens)
}

/// The aggressive JPEG step and then the last resort, from `base` (the
/// image at standard size); `cost` knows the standard JPEG, if there was one.
fn shrink_to_jpeg(
    base: &DynamicImage,
    original: (u32, u32),
    max_tokens: u64,
    cost: JpegCost,
) -> Result<PreparedImage, String> {
    let flat = flatten_onto_white(base);
    if let Some(found) = aggressive(&flat, original, max_tokens, cost)? {
        return Ok(found);
    }
    last_resort(&flat, original, max_tokens)
}

/// The decoder format for a media type returned by [`sniff`].
fn image_format(media_type: &str) -> ImageFormat {
    match media_type {
        "image/png" => ImageFormat::Png,
        "image/gif" => ImageFormat::Gif,
        "image/webp" => ImageFormat::WebP,
        _ => ImageFormat::Jpeg,
    }
}

/// Whether the original bytes may be sent as they are. GIF never is: only
/// its first frame is sent, always re-encoded as PNG (cheaper than finding
/// out whether it is animated, and one still is what the model sees anyway).
/// An animated WebP is treated the same way.
fn can_send_unchanged(bytes: &[u8], media_type: &str) -> bool {
    match media_type {
        "image/gif" => false,
        "image/webp" => !webp_is_animated(bytes),
        _ => true,
    }
}

/// The encoding of the standard step: the original format where `image` can
/// write it. GIF becomes PNG (first frame). WebP becomes PNG when it was
/// lossless (screenshots, diagrams: text stays sharp) and JPEG otherwise
/// (photos: PNG would be many times larger), since `image` writes only
/// lossless WebP, which is far larger than a lossy original.
fn standard_encoding(bytes: &[u8], media_type: &str) -> Encoding {
    match media_type {
        "image/jpeg" => Encoding::Jpeg(STANDARD_JPEG_QUALITY),
        "image/webp" if !webp_is_lossless(bytes) => Encoding::Jpeg(STANDARD_JPEG_QUALITY),
        _ => Encoding::Png,
    }
}

/// The RIFF chunks of a WebP file after its 12-byte header, as (fourcc, payload).
fn webp_chunks(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = 12usize;
    std::iter::from_fn(move || {
        let header = bytes.get(at..at.checked_add(8)?)?;
        let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        let start = at + 8;
        let payload = bytes.get(start..start.saturating_add(size).min(bytes.len()))?;
        at = start.saturating_add(size).saturating_add(size & 1);
        Some((&header[..4], payload))
    })
}

/// Whether a WebP file holds lossless (VP8L) image data.
fn webp_is_lossless(bytes: &[u8]) -> bool {
    webp_chunks(bytes)
        .map(|(fourcc, _)| fourcc)
        .find(|fourcc| *fourcc == b"VP8L" || *fourcc == b"VP8 ")
        .is_some_and(|fourcc| fourcc == b"VP8L")
}

/// Whether a WebP file sets the animation flag of its VP8X header.
fn webp_is_animated(bytes: &[u8]) -> bool {
    webp_chunks(bytes).next().is_some_and(|(fourcc, payload)| {
        fourcc == b"VP8X" && payload.first().is_some_and(|f| f & 0x02 != 0)
    })
}

/// The limits every decode runs under.
fn decode_limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODE_SIDE);
    limits.max_image_height = Some(MAX_DECODE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    limits
}

/// A reader of `bytes` as `format`, with `limits`.
fn reader(bytes: &[u8], format: ImageFormat, limits: Limits) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    reader
}

/// Width and height from the header alone. Only the memory limit applies
/// here, so an oversized image is reported with its size by [`check_decodable`].
fn read_dimensions(bytes: &[u8], format: ImageFormat) -> Result<(u32, u32), String> {
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    guarded(|| reader(bytes, format, limits).into_dimensions())?
        .map_err(|error| decode_error(&error, None))
}

/// Refuses images whose header says they are too large to decode.
fn check_decodable((width, height): (u32, u32)) -> Result<(), String> {
    if width > MAX_DECODE_SIDE || height > MAX_DECODE_SIDE {
        return Err(format!(
            "The image is {width}x{height} pixels, larger than the \
             {MAX_DECODE_SIDE}x{MAX_DECODE_SIDE} that can be read"
        ));
    }
    Ok(())
}

/// Decodes the first frame under [`decode_limits`], with its EXIF orientation applied.
fn decode(bytes: &[u8], format: ImageFormat, size: (u32, u32)) -> Result<DynamicImage, String> {
    let decoded = guarded(|| -> Result<DynamicImage, ImageError> {
        let mut decoder = reader(bytes, format, decode_limits()).into_decoder()?;
        let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
        // As `ImageReader::decode` does: the output buffer counts against the limit.
        let mut limits = decode_limits();
        limits.reserve(decoder.total_bytes())?;
        decoder.set_limits(limits)?;
        let mut image = DynamicImage::from_decoder(decoder)?;
        image.apply_orientation(orientation);
        Ok(image)
    })?;
    decoded.map_err(|error| decode_error(&error, Some(size)))
}

/// Runs a decoder step, turning a panic inside a codec into an error, so a
/// hostile file cannot bring down the agent even through a decoder bug.
/// (The panic hook still runs; with `panic = "abort"` this cannot help.)
fn guarded<T>(step: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(step)).map_err(|_| DECODER_PANICKED.to_string())
}

/// A one-line message for a decoding error.
fn decode_error(error: &ImageError, size: Option<(u32, u32)>) -> String {
    match (error, size) {
        (ImageError::Limits(_), Some((width, height))) => format!(
            "The image is {width}x{height} pixels, too large to decode within {} MiB",
            MAX_DECODE_ALLOC / (1024 * 1024)
        ),
        _ => one_line(&format!("The image could not be decoded: {error}")),
    }
}

/// `message` with line breaks folded into spaces.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `image` with 8-bit channels, keeping grey as grey and alpha as alpha.
fn into_8bit(image: DynamicImage) -> DynamicImage {
    match image.color() {
        ColorType::L8 | ColorType::La8 | ColorType::Rgb8 | ColorType::Rgba8 => image,
        ColorType::L16 => DynamicImage::ImageLuma8(image.into_luma8()),
        ColorType::La16 => DynamicImage::ImageLumaA8(image.into_luma_alpha8()),
        _ if image.color().has_alpha() => DynamicImage::ImageRgba8(image.into_rgba8()),
        _ => DynamicImage::ImageRgb8(image.into_rgb8()),
    }
}

/// `image` on a white background, without alpha, ready for JPEG; borrowed
/// when it has no alpha. Expects 8-bit channels (see [`into_8bit`]).
fn flatten_onto_white(image: &DynamicImage) -> Cow<'_, DynamicImage> {
    if !image.color().has_alpha() {
        return Cow::Borrowed(image);
    }
    let rgba = image.to_rgba8();
    let flat = RgbImage::from_fn(image.width(), image.height(), |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        Rgb([over_white(r, a), over_white(g, a), over_white(b, a)])
    });
    Cow::Owned(DynamicImage::ImageRgb8(flat))
}

/// One channel of a pixel with alpha `alpha` composited over white.
fn over_white(channel: u8, alpha: u8) -> u8 {
    let (c, a) = (u32::from(channel), u32::from(alpha));
    ((c * a + 255 * (255 - a) + 127) / 255) as u8
}

/// The bytes of `image` in `encoding`; alpha is flattened onto white for JPEG.
fn encode(image: &DynamicImage, encoding: Encoding) -> Result<Vec<u8>, String> {
    let failed = |error: &dyn std::fmt::Display| {
        one_line(&format!("The image could not be encoded: {error}"))
    };
    let mut out = Vec::new();
    match encoding {
        Encoding::Png => image
            .write_with_encoder(PngEncoder::new(&mut out))
            .map_err(|error| failed(&error))?,
        Encoding::Jpeg(quality) => write_jpeg(&flatten_onto_white(image), quality, &mut out)
            .map_err(|error| failed(&error))?,
    }
    Ok(out)
}

/// `image` (8-bit, no alpha) as a JPEG of `quality` into `out`, with `jpeg-encoder`: about
/// 2.5 times as fast as `image`'s own encoder and, with 4:2:0 chroma subsampling, about half
/// the size at the same quality, so a larger image fits the budget.
fn write_jpeg(image: &DynamicImage, quality: u8, out: &mut Vec<u8>) -> Result<(), String> {
    let side = |side: u32| {
        u16::try_from(side).map_err(|_| format!("{side} pixels is over JPEG's limit of 65535"))
    };
    let (width, height) = (side(image.width())?, side(image.height())?);
    let encoder = jpeg_encoder::Encoder::new(out, quality);
    let written = match image {
        DynamicImage::ImageLuma8(grey) => {
            encoder.encode(grey, width, height, jpeg_encoder::ColorType::Luma)
        }
        DynamicImage::ImageRgb8(rgb) => {
            encoder.encode(rgb, width, height, jpeg_encoder::ColorType::Rgb)
        }
        other => encoder.encode(
            &other.to_rgb8(),
            width,
            height,
            jpeg_encoder::ColorType::Rgb,
        ),
    };
    written.map_err(|error| error.to_string())
}

/// Estimated tokens of sending `byte_len` bytes as base64.
fn tokens_of(byte_len: usize) -> u64 {
    estimate_tokens(base64::encoded_len(byte_len, true).unwrap_or(usize::MAX))
}

/// Whether `byte_len` bytes, sent as base64, fit `max_tokens`.
fn fits(byte_len: usize, max_tokens: u64) -> bool {
    tokens_of(byte_len) <= max_tokens
}

/// The result for `bytes` of `media_type`, `sent` pixels, from `original`.
fn prepared(
    media_type: &str,
    bytes: &[u8],
    original: (u32, u32),
    sent: (u32, u32),
) -> PreparedImage {
    PreparedImage {
        media_type: media_type.to_string(),
        data: STANDARD.encode(bytes),
        original,
        sent,
    }
}

/// JPEG at decreasing quality and size, from the flattened standard-size
/// image `flat`; `None` if nothing fits. Sizes and qualities that `cost`
/// predicts cannot fit are skipped without encoding (or resizing).
fn aggressive(
    flat: &DynamicImage,
    original: (u32, u32),
    max_tokens: u64,
    mut cost: JpegCost,
) -> Result<Option<PreparedImage>, String> {
    let long = flat.width().max(flat.height());
    let sides =
        std::iter::once(long).chain(AGGRESSIVE_SIDES.into_iter().filter(|&side| side < long));
    for side in sides {
        let size = fit_within(flat.dimensions(), side);
        let may_fit = |cost: &JpegCost| {
            AGGRESSIVE_QUALITIES
                .iter()
                .any(|&(_, factor)| cost.may_fit(size, factor, max_tokens))
        };
        if !may_fit(&cost) {
            continue;
        }
        // Before encoding a large image, a small sample at this scale may rule it out.
        if let Some(sampled) = jpeg_cost::sampled(flat, size)? {
            cost.learn_sampled(sampled);
            if !may_fit(&cost) {
                continue;
            }
        }
        let scaled = downscale(flat, side);
        let image = scaled.as_ref().unwrap_or(flat);
        if let Some(found) = best_jpeg(image, original, max_tokens, &mut cost)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// The best of [`AGGRESSIVE_QUALITIES`] of `image` that fits, if any,
/// encoding only those `cost` says may fit, and teaching it each miss.
fn best_jpeg(
    image: &DynamicImage,
    original: (u32, u32),
    max_tokens: u64,
    cost: &mut JpegCost,
) -> Result<Option<PreparedImage>, String> {
    for (quality, factor) in AGGRESSIVE_QUALITIES {
        if !cost.may_fit(image.dimensions(), factor, max_tokens) {
            continue;
        }
        let bytes = encode(image, Encoding::Jpeg(quality))?;
        if fits(bytes.len(), max_tokens) {
            let size = image.dimensions();
            return Ok(Some(prepared("image/jpeg", &bytes, original, size)));
        }
        cost.learn(image.dimensions(), factor, tokens_of(bytes.len()));
    }
    Ok(None)
}

/// At most [`LAST_RESORT_SIDE`] square at JPEG quality
/// [`LAST_RESORT_QUALITY`], or the error saying it is still too large.
fn last_resort(
    flat: &DynamicImage,
    original: (u32, u32),
    max_tokens: u64,
) -> Result<PreparedImage, String> {
    let scaled = downscale(flat, LAST_RESORT_SIDE);
    let image = scaled.as_ref().unwrap_or(flat);
    let bytes = encode(image, Encoding::Jpeg(LAST_RESORT_QUALITY))?;
    if fits(bytes.len(), max_tokens) {
        return Ok(prepared("image/jpeg", &bytes, original, image.dimensions()));
    }
    let (width, height) = image.dimensions();
    Err(format!(
        "The image ({}x{} pixels) is too large to send: even at {width}x{height} as JPEG \
         quality {LAST_RESORT_QUALITY} it needs about {} tokens, over the budget of {max_tokens}",
        original.0,
        original.1,
        tokens_of(bytes.len()),
    ))
}

#[cfg(test)]
mod tests;
