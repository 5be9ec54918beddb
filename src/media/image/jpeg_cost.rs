//! Predicting how large a JPEG of an image will be without encoding all of it, so the budget's
//! JPEG ladder (`mod.rs`) encodes few candidates: `image`'s JPEG encoder needs ~85 ms for a
//! 2000x1333 image on the development machine, more than the rest of preparing a 6000x4000 PNG.
//!
//! Two sources feed one [`JpegCost`]. A JPEG actually encoded gives the tokens per pixel at its
//! size exactly. Before a large candidate size is encoded, [`sampled`] encodes a mosaic of
//! small tiles taken across the image at that scale: JPEG codes 8x8 blocks (16x16 with chroma
//! subsampling) nearly independently, so tiles aligned to 16 pixels cost what the same blocks
//! cost in the whole image, and 36 tiles spread over it estimate the whole well (within 20% on
//! the test images; the headers, paid once per file, are taken out). The estimate
//! is lowered by [`SAMPLE_MARGIN`] so that it rules out only sizes that are clearly over; a
//! size it lets through is still encoded and measured.

use image::{DynamicImage, GenericImageView, imageops};

use super::resize::resize_to;
use super::{Encoding, encode, tokens_of};

/// Side of a sampled tile: a multiple of JPEG's 16-pixel MCU, so no block straddles two tiles.
const TILE: u32 = 48;
/// Tiles along each side of the mosaic.
const GRID: u32 = 6;
/// A sample is not worth it below this many times the mosaic's pixels: encode instead.
const WORTH_SAMPLING: f64 = 8.0;
/// How much lower than a sampled estimate a JPEG may turn out (sampling error).
const SAMPLE_MARGIN: f64 = 1.3;

/// Predicts a JPEG's tokens in proportion to pixels, and to quality by a factor relative to
/// quality 80. Learned from the last JPEG encoded: shrinking an image makes its detail denser,
/// so the prediction for a smaller size is low rather than high, and what it rules out would
/// not fit (for quality the factors are typical, not bounds). A sampled estimate at a size
/// raises it when the sample says more.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct JpegCost {
    /// Tokens per pixel at quality 80, once something is known.
    per_pixel: Option<f64>,
}

impl JpegCost {
    /// Whether a JPEG of `size` pixels at quality `factor` may fit `max_tokens`.
    pub(super) fn may_fit(self, size: (u32, u32), factor: f64, max_tokens: u64) -> bool {
        self.per_pixel
            .is_none_or(|per_pixel| per_pixel * pixels(size) * factor <= max_tokens as f64)
    }

    /// Takes in that a JPEG of `size` pixels at quality `factor` cost `tokens`.
    pub(super) fn learn(&mut self, size: (u32, u32), factor: f64, tokens: u64) {
        self.per_pixel = Some(tokens as f64 / (pixels(size) * factor));
    }

    /// Takes in a sampled estimate of tokens per pixel at quality 80 for the size about to be
    /// tried, lowered by [`SAMPLE_MARGIN`]; kept only where it says more than what is known.
    pub(super) fn learn_sampled(&mut self, per_pixel: f64) {
        let estimate = per_pixel / SAMPLE_MARGIN;
        self.per_pixel = Some(self.per_pixel.map_or(estimate, |known| known.max(estimate)));
    }
}

/// Pixels in an image of `size`, as a float.
pub(super) fn pixels((width, height): (u32, u32)) -> f64 {
    f64::from(width) * f64::from(height)
}

/// Estimated tokens per pixel of `flat` (8-bit, no alpha) shrunk to `size`, as JPEG quality 80, from a
/// mosaic of [`GRID`] x [`GRID`] tiles of [`TILE`] pixels taken evenly across it at that scale;
/// `None` when the image at that size is too small for a sample to pay.
pub(super) fn sampled(flat: &DynamicImage, size: (u32, u32)) -> Result<Option<f64>, String> {
    let mosaic_side = TILE * GRID;
    let mosaic_pixels = pixels((mosaic_side, mosaic_side));
    if pixels(size) < WORTH_SAMPLING * mosaic_pixels || size.0 < TILE || size.1 < TILE {
        return Ok(None);
    }
    let (width, height) = flat.dimensions();
    // Source pixels per target pixel along each axis.
    let scale = (
        f64::from(width) / f64::from(size.0),
        f64::from(height) / f64::from(size.1),
    );
    let mut mosaic = DynamicImage::new(mosaic_side, mosaic_side, flat.color());
    for row in 0..GRID {
        for column in 0..GRID {
            // The tile's place in the image at `size`, spread from edge to edge.
            let x = (size.0 - TILE) * column / (GRID - 1);
            let y = (size.1 - TILE) * row / (GRID - 1);
            let region = source_region((x, y), scale, (width, height));
            let tile = flat.crop_imm(region.0, region.1, region.2, region.3);
            let tile = if (region.2, region.3) == (TILE, TILE) {
                tile
            } else {
                resize_to(&tile, (TILE, TILE))
            };
            let (left, top) = (i64::from(column * TILE), i64::from(row * TILE));
            imageops::replace(&mut mosaic, &tile, left, top);
        }
    }
    let bytes = encode(&mosaic, Encoding::Jpeg(80))?.len();
    // The headers and tables are paid once per file, and are a large share of a small one.
    let headers = encode(&DynamicImage::new(16, 16, flat.color()), Encoding::Jpeg(80))?.len();
    Ok(Some(
        tokens_of(bytes.saturating_sub(headers)) as f64 / mosaic_pixels,
    ))
}

/// The region of the source (x, y, width, height) that a tile at `at` in the shrunk image
/// covers, kept inside the source and at least a tile in size.
fn source_region(at: (u32, u32), scale: (f64, f64), source: (u32, u32)) -> (u32, u32, u32, u32) {
    let span = |position: u32, scale: f64, limit: u32| {
        let length = ((f64::from(TILE) * scale).round() as u32).clamp(TILE.min(limit), limit);
        let start = ((f64::from(position) * scale).round() as u32).min(limit - length);
        (start, length)
    };
    let (x, width) = span(at.0, scale.0, source.0);
    let (y, height) = span(at.1, scale.1, source.1);
    (x, y, width, height)
}
