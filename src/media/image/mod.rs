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
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use image::metadata::Orientation;
use image::{
    ColorType, DynamicImage, GenericImageView, ImageBuffer, ImageDecoder, ImageError, ImageFormat,
    ImageReader, Limits, Pixel, Rgb, RgbImage,
};

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
    let image = decode(bytes, format, original)?;
    if sends_original(bytes, media_type, original, max_tokens) {
        return Ok(prepared(media_type, bytes, original, original));
    }
    let image = into_8bit(image);
    let base = downscale(&image, MAX_SIDE).unwrap_or(image);
    let encoding = standard_encoding(bytes, media_type);
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
    catch_unwind(AssertUnwindSafe(step))
        .map_err(|_| "The image could not be decoded: the decoder failed on it".to_string())
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

/// The size of `(width, height)` scaled to fit `max_side`, aspect kept.
fn fit_within((width, height): (u32, u32), max_side: u32) -> (u32, u32) {
    let long = width.max(height);
    if long <= max_side {
        return (width, height);
    }
    let scale = |side: u32| {
        let scaled =
            (u64::from(side) * u64::from(max_side) + u64::from(long) / 2) / u64::from(long);
        scaled.clamp(1, u64::from(max_side)) as u32
    };
    (scale(width), scale(height))
}

/// `image` shrunk so its long side is at most `max_side`, or `None` if it
/// already is.
fn downscale(image: &DynamicImage, max_side: u32) -> Option<DynamicImage> {
    let target = fit_within(image.dimensions(), max_side);
    (target != image.dimensions()).then(|| resize_to(image, target))
}

/// `image` shrunk to exactly `target`, which is not larger, by area
/// averaging (as OpenCV's `INTER_AREA`): each output pixel is the mean of
/// the source area it covers. Alias-free for any factor, and from 6000x4000
/// to 2000x1333 about 65 ms against 490 ms for `image`'s Triangle filter
/// (630 ms CatmullRom, 930 ms Lanczos3), which goes through an `f32` RGBA
/// copy. Alpha is averaged as is (not premultiplied).
fn resize_to(image: &DynamicImage, target: (u32, u32)) -> DynamicImage {
    match image {
        DynamicImage::ImageLuma8(buffer) => DynamicImage::ImageLuma8(area_resize(buffer, target)),
        DynamicImage::ImageLumaA8(buffer) => DynamicImage::ImageLumaA8(area_resize(buffer, target)),
        DynamicImage::ImageRgb8(buffer) => DynamicImage::ImageRgb8(area_resize(buffer, target)),
        DynamicImage::ImageRgba8(buffer) => DynamicImage::ImageRgba8(area_resize(buffer, target)),
        other => other.resize_exact(target.0, target.1, FilterType::Triangle),
    }
}

/// [`resize_to`] over one 8-bit buffer: for each output row, the source
/// rows it covers are summed by weight into one band (a loop that
/// vectorises), and the band is then shrunk along the row.
fn area_resize<P: Pixel<Subpixel = u8>>(
    source: &ImageBuffer<P, Vec<u8>>,
    (width, height): (u32, u32),
) -> ImageBuffer<P, Vec<u8>> {
    let channels = usize::from(P::CHANNEL_COUNT);
    let in_row = source.width() as usize * channels;
    let columns = area_weights(source.width(), width);
    let rows = area_weights(source.height(), height);
    let mut out = ImageBuffer::<P, Vec<u8>>::new(width, height);
    let mut band = vec![0f32; in_row];
    let source: &[u8] = source;
    let target: &mut [u8] = &mut out;
    let out_rows = target.chunks_exact_mut((width as usize * channels).max(1));
    for (out_line, (first, weights)) in out_rows.zip(&rows) {
        band.fill(0.0);
        for (line, weight) in source.chunks_exact(in_row.max(1)).skip(*first).zip(weights) {
            for (sum, value) in band.iter_mut().zip(line) {
                *sum += weight * f32::from(*value);
            }
        }
        shrink_line::<P>(out_line, &band, &columns);
    }
    out
}

/// Each pixel of `out_line` as the weighted sum of the `band` pixels its
/// entry of `columns` covers.
/// (Generic over the pixel type so the channel count is a constant.)
fn shrink_line<P: Pixel<Subpixel = u8>>(
    out_line: &mut [u8],
    band: &[f32],
    columns: &[(usize, Vec<f32>)],
) {
    let channels = usize::from(P::CHANNEL_COUNT);
    for (pixel, (first, weights)) in out_line.chunks_exact_mut(channels).zip(columns) {
        let covered = band.get(first * channels..).unwrap_or_default();
        let mut sums = [0f32; 4];
        for (source, weight) in covered.chunks_exact(channels).zip(weights) {
            for (sum, value) in sums.iter_mut().zip(source) {
                *sum += weight * value;
            }
        }
        for (value, sum) in pixel.iter_mut().zip(sums) {
            *value = sum.round().clamp(0.0, 255.0) as u8;
        }
    }
}

/// For each of `target` output pixels along an axis of `source` pixels
/// (`target <= source`), the first source pixel it covers and the weight of
/// each one it covers: the share of the output pixel that it fills.
fn area_weights(source: u32, target: u32) -> Vec<(usize, Vec<f32>)> {
    let ratio = f64::from(source) / f64::from(target.max(1));
    (0..target)
        .map(|index| {
            let start = f64::from(index) * ratio;
            let end = (start + ratio).min(f64::from(source));
            let first = start.floor() as usize;
            let last = (end.ceil() as usize).max(first + 1);
            let weights = (first..last)
                .map(|pixel| {
                    let covered = end.min(pixel as f64 + 1.0) - start.max(pixel as f64);
                    (covered.max(0.0) / ratio) as f32
                })
                .collect();
            (first, weights)
        })
        .collect()
}

/// The bytes of `image` in `encoding`; alpha is flattened onto white for JPEG.
fn encode(image: &DynamicImage, encoding: Encoding) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let written = match encoding {
        Encoding::Png => image.write_with_encoder(PngEncoder::new(&mut out)),
        Encoding::Jpeg(quality) => flatten_onto_white(image)
            .write_with_encoder(JpegEncoder::new_with_quality(&mut out, quality)),
    };
    written.map_err(|error| one_line(&format!("The image could not be encoded: {error}")))?;
    Ok(out)
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

/// Predicts a JPEG's tokens from the last one encoded of the same image:
/// in proportion to pixels, and to quality as in [`AGGRESSIVE_QUALITIES`].
/// Shrinking an image makes its detail denser, so the prediction for a
/// smaller size is low rather than high: what it rules out would not fit
/// (for quality the factors are typical, not bounds).
#[derive(Debug, Default, Clone, Copy)]
struct JpegCost {
    /// Tokens per pixel at quality 80, once a JPEG has been measured.
    per_pixel: Option<f64>,
}

impl JpegCost {
    /// Whether a JPEG of `size` pixels at quality `factor` may fit `max_tokens`.
    fn may_fit(self, size: (u32, u32), factor: f64, max_tokens: u64) -> bool {
        self.per_pixel
            .is_none_or(|per_pixel| per_pixel * pixels(size) * factor <= max_tokens as f64)
    }

    /// Takes in that a JPEG of `size` pixels at quality `factor` cost `tokens`.
    fn learn(&mut self, size: (u32, u32), factor: f64, tokens: u64) {
        self.per_pixel = Some(tokens as f64 / (pixels(size) * factor));
    }
}

/// Pixels in an image of `size`, as a float for [`JpegCost`].
fn pixels((width, height): (u32, u32)) -> f64 {
    f64::from(width) * f64::from(height)
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
        if !AGGRESSIVE_QUALITIES
            .iter()
            .any(|&(_, factor)| cost.may_fit(size, factor, max_tokens))
        {
            continue;
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
