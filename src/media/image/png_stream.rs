//! Decoding a PNG straight to a smaller size: rows go from the `png` decoder into an
//! [`AreaShrinker`] as they are produced, so a 6000x4000 image never exists at full size.
//!
//! Decoding to a full buffer and then shrinking it costs the 72-96 MB buffer (page faults and
//! a pass over memory that no longer fits any cache) on top of the decode; streaming keeps the
//! row just decoded hot for the shrinker and halves the time of the whole step. Decoding runs on
//! its own thread and hands rows over in batches, so inflating and shrinking overlap on a
//! machine with a second core.
//!
//! Only the common case streams: a non-interlaced PNG without EXIF data (whose orientation would
//! have to be applied to the full image). For anything else [`decode_shrunk`] returns `None`
//! and the caller decodes the ordinary way. Decoding runs under the same size and memory limits
//! as the ordinary path, and a decoder panic becomes an error as there.

use std::io::Cursor;
use std::sync::mpsc;

use image::DynamicImage;
use png::{BitDepth, ColorType, Transformations};

use super::resize::AreaShrinker;

/// Source rows handed from the decoding thread to the shrinker at a time.
const BATCH_ROWS: usize = 32;
/// Batches in flight between the two threads (bounds the memory of the hand-over).
const BATCHES_IN_FLIGHT: usize = 4;

/// The PNG in `bytes` (of `size` pixels, checked against the limits by the caller) decoded
/// and shrunk to `target` with 8-bit channels; `None` when it is not a case that streams.
/// `max_alloc` bounds what the decoder itself may allocate, and (as on the ordinary path) the
/// size of the whole decoded image, though it is never held.
pub(super) fn decode_shrunk(
    bytes: &[u8],
    size: (u32, u32),
    target: (u32, u32),
    max_alloc: u64,
) -> Option<Result<DynamicImage, String>> {
    let limits = png::Limits {
        bytes: usize::try_from(max_alloc).unwrap_or(usize::MAX),
    };
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), limits);
    decoder.set_transformations(Transformations::normalize_to_color8());
    decoder.set_ignore_text_chunk(true);
    let reader = match decoder.read_info() {
        Ok(reader) => reader,
        Err(error) => return Some(Err(decode_failed(&error, size))),
    };
    let info = reader.info();
    if info.interlaced || info.exif_metadata.is_some() || (info.width, info.height) != size {
        return None;
    }
    let channels = match reader.output_color_type() {
        (ColorType::Grayscale, BitDepth::Eight) => 1,
        (ColorType::GrayscaleAlpha, BitDepth::Eight) => 2,
        (ColorType::Rgb, BitDepth::Eight) => 3,
        (ColorType::Rgba, BitDepth::Eight) => 4,
        _ => return None,
    };
    // The same limit as the ordinary path, which holds the whole image: a picture this large
    // would take seconds to decode even row by row.
    let whole = reader.output_buffer_size().map(|bytes| bytes as u64);
    if whole.is_none_or(|bytes| bytes > max_alloc) {
        return Some(Err(decode_failed(
            &png::DecodingError::LimitsExceeded,
            size,
        )));
    }
    let row_len = size.0 as usize * usize::from(channels);
    if reader.output_line_size(size.0) != Some(row_len) {
        return None;
    }
    let mut shrinker = AreaShrinker::new(size, target, channels);
    let decoded = std::thread::scope(|scope| {
        let (batches, received) = mpsc::sync_channel::<Vec<u8>>(BATCHES_IN_FLIGHT);
        let (spares, spare) = mpsc::channel::<Vec<u8>>();
        let decoding = scope.spawn(move || read_rows(reader, (size, row_len), &batches, &spare));
        for batch in received {
            for row in batch.chunks(row_len.max(1)) {
                shrinker.push_row(row);
            }
            // The decoder may be gone already; the batch is then simply dropped.
            let _ = spares.send(batch);
        }
        decoding
            .join()
            .unwrap_or_else(|_| Err(super::DECODER_PANICKED.to_string()))
    });
    Some(decoded.and_then(|()| into_image(channels, target, shrinker.finish())))
}

/// Decodes every row of `reader` (rows of `row_len` bytes), sending them in batches of
/// [`BATCH_ROWS`]; batch buffers come back through `spare` to be reused. Rows are decoded
/// straight into the batch. Stops early when the receiver is gone.
fn read_rows(
    mut reader: png::Reader<Cursor<&[u8]>>,
    (size, row_len): ((u32, u32), usize),
    batches: &mpsc::SyncSender<Vec<u8>>,
    spare: &mpsc::Receiver<Vec<u8>>,
) -> Result<(), String> {
    let batch_len = row_len * BATCH_ROWS;
    let mut batch = vec![0; batch_len];
    let mut rows = 0;
    loop {
        let start = rows * row_len;
        let Some(line) = batch.get_mut(start..start + row_len) else {
            return Err(decode_failed(&png::DecodingError::LimitsExceeded, size));
        };
        match reader.read_row(line) {
            Ok(Some(_)) => rows += 1,
            Ok(None) => break,
            Err(error) => return Err(decode_failed(&error, size)),
        }
        if rows == BATCH_ROWS {
            let next = (spare.try_recv().ok())
                .filter(|spare| spare.len() == batch_len)
                .unwrap_or_else(|| vec![0; batch_len]);
            if batches.send(std::mem::replace(&mut batch, next)).is_err() {
                return Ok(());
            }
            rows = 0;
        }
    }
    if rows > 0 {
        batch.truncate(rows * row_len);
        let _ = batches.send(batch);
    }
    Ok(())
}

/// The shrunk pixels as an image of `channels` 8-bit channels.
fn into_image(
    channels: u8,
    (width, height): (u32, u32),
    pixels: Vec<u8>,
) -> Result<DynamicImage, String> {
    let image = match channels {
        1 => image::GrayImage::from_raw(width, height, pixels).map(DynamicImage::ImageLuma8),
        2 => image::GrayAlphaImage::from_raw(width, height, pixels).map(DynamicImage::ImageLumaA8),
        3 => image::RgbImage::from_raw(width, height, pixels).map(DynamicImage::ImageRgb8),
        _ => image::RgbaImage::from_raw(width, height, pixels).map(DynamicImage::ImageRgba8),
    };
    image.ok_or_else(|| {
        "The image could not be decoded: the shrunk image has the wrong size".to_string()
    })
}

/// A one-line message for a decoding error of an image of `size`, worded as the ordinary
/// path words it.
fn decode_failed(error: &png::DecodingError, (width, height): (u32, u32)) -> String {
    match error {
        png::DecodingError::LimitsExceeded => format!(
            "The image is {width}x{height} pixels, too large to decode within {} MiB",
            super::MAX_DECODE_ALLOC / (1024 * 1024)
        ),
        other => super::one_line(&format!("The image could not be decoded: {other}")),
    }
}
