//! Tests of image preparation: each format, the budget's steps, hostile and broken files.

use super::*;
use image::codecs::gif::GifEncoder;
use image::codecs::webp::WebPEncoder;
use image::{Delay, Frame, Rgba, RgbaImage};

const BUDGET: u64 = 25_000;

/// A gradient with a little noise, so it compresses like a photo rather
/// than to nothing.
fn gradient(width: u32, height: u32) -> DynamicImage {
    let mut state: u32 = 0x9E37_79B9;
    DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let noise = (state & 15) as u8;
        Rgb([
            (x * 255 / width) as u8 ^ noise,
            (y * 255 / height) as u8 ^ noise,
            ((x + y) % 256) as u8,
        ])
    }))
}

fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).expect("encode test image");
    out.into_inner()
}

/// The image that was sent, decoded, checked against `sent`.
fn sent_image(prepared: &PreparedImage) -> DynamicImage {
    let bytes = STANDARD.decode(&prepared.data).expect("valid base64");
    assert_eq!(sniff(&bytes), Some(prepared.media_type.as_str()));
    let image = image::load_from_memory(&bytes).expect("sent image decodes");
    assert_eq!(image.dimensions(), prepared.sent);
    image
}

#[test]
fn small_png_is_sent_unchanged() {
    let bytes = encoded(&gradient(64, 48), ImageFormat::Png);
    let prepared = prepare(&bytes, BUDGET).expect("prepared");
    assert_eq!(prepared.media_type, "image/png");
    assert_eq!(prepared.data, STANDARD.encode(&bytes));
    assert_eq!(prepared.original, (64, 48));
    assert_eq!(prepared.sent, prepared.original);
}

#[test]
fn large_png_is_downscaled_within_budget() {
    let bytes = encoded(&gradient(6000, 4000), ImageFormat::Png);
    let prepared = prepare(&bytes, BUDGET).expect("prepared");
    let (width, height) = prepared.sent;
    assert_eq!(prepared.original, (6000, 4000));
    assert!(width.max(height) <= MAX_SIDE, "sent {width}x{height}");
    assert!((i64::from(width) * 4000 - i64::from(height) * 6000).abs() <= 6000);
    assert!(estimate_tokens(prepared.data.len()) <= BUDGET);
    sent_image(&prepared);
}

#[test]
fn jpeg_is_accepted() {
    let bytes = encoded(&gradient(300, 200), ImageFormat::Jpeg);
    let prepared = prepare(&bytes, BUDGET).expect("prepared");
    assert_eq!(prepared.media_type, "image/jpeg");
    assert_eq!(prepared.original, (300, 200));
    assert_eq!(prepared.data, STANDARD.encode(&bytes));
}

#[test]
fn large_jpeg_is_reencoded_as_jpeg() {
    let bytes = encoded(&gradient(2400, 600), ImageFormat::Jpeg);
    // Past MAX_SIDE, so re-encoded even though the original fits the budget.
    let prepared = prepare(&bytes, 1_000_000).expect("prepared");
    assert_eq!(prepared.media_type, "image/jpeg");
    assert_eq!(prepared.original, (2400, 600));
    assert_eq!(prepared.sent, (2000, 500));
    sent_image(&prepared);
}

#[test]
fn gif_sends_its_first_frame_as_png() {
    let frame = |color: [u8; 4]| {
        let pixels = RgbaImage::from_pixel(40, 30, Rgba(color));
        Frame::from_parts(pixels, 0, 0, Delay::from_numer_denom_ms(100, 1))
    };
    let mut bytes = Vec::new();
    GifEncoder::new(&mut bytes)
        .encode_frames([frame([255, 0, 0, 255]), frame([0, 0, 255, 255])])
        .expect("encode gif");
    let prepared = prepare(&bytes, BUDGET).expect("prepared");
    assert_eq!(prepared.media_type, "image/png");
    assert_eq!((prepared.original, prepared.sent), ((40, 30), (40, 30)));
    let first = sent_image(&prepared).to_rgba8();
    assert_eq!(first.get_pixel(20, 15).0, [255, 0, 0, 255]);
}

#[test]
fn webp_is_accepted() {
    let image = DynamicImage::ImageRgba8(gradient(50, 40).to_rgba8());
    let mut bytes = Vec::new();
    image
        .write_with_encoder(WebPEncoder::new_lossless(&mut bytes))
        .expect("encode webp");
    assert!(webp_is_lossless(&bytes));
    let prepared = prepare(&bytes, BUDGET).expect("prepared");
    assert_eq!(prepared.media_type, "image/webp");
    assert_eq!((prepared.original, prepared.sent), ((50, 40), (50, 40)));
    assert_eq!(prepared.data, STANDARD.encode(&bytes));
}

#[test]
fn large_lossless_webp_becomes_png() {
    let mut bytes = Vec::new();
    gradient(2200, 100)
        .write_with_encoder(WebPEncoder::new_lossless(&mut bytes))
        .expect("encode webp");
    // Past MAX_SIDE, so re-encoded; the budget is ample for the PNG.
    let prepared = prepare(&bytes, 1_000_000).expect("prepared");
    assert_eq!(prepared.media_type, "image/png");
    assert_eq!(
        (prepared.original, prepared.sent),
        ((2200, 100), (2000, 91))
    );
    sent_image(&prepared);
}

#[test]
fn webp_chunks_tell_lossy_lossless_and_animated() {
    let webp = |chunks: &[u8]| [b"RIFF\0\0\0\0WEBP".as_slice(), chunks].concat();
    let lossy = webp(b"VP8 \x02\0\0\0ab");
    let lossless = webp(b"VP8L\x01\0\0\0a\0");
    let extended = webp(b"VP8X\x0a\0\0\0\x10\0\0\0\0\0\0\0\0\0ALPH\x01\0\0\0a\0VP8L\x00\0\0\0");
    let animated = webp(b"VP8X\x0a\0\0\0\x02\0\0\0\0\0\0\0\0\0");
    assert!(!webp_is_lossless(&lossy) && !webp_is_animated(&lossy));
    assert!(webp_is_lossless(&lossless));
    assert!(webp_is_lossless(&extended) && !webp_is_animated(&extended));
    assert!(webp_is_animated(&animated));
    assert!(!webp_is_lossless(&webp(b"VP8L\xff\xff\xff\xff")[..14]));
    assert_eq!(standard_encoding(&lossy, "image/webp"), Encoding::Jpeg(85));
    assert_eq!(standard_encoding(&lossless, "image/webp"), Encoding::Png);
}

#[test]
fn truncated_png_is_an_error() {
    let bytes = encoded(&gradient(200, 200), ImageFormat::Png);
    let error = prepare(&bytes[..bytes.len() / 2], BUDGET).expect_err("truncated");
    assert!(
        error.starts_with("The image could not be decoded"),
        "{error}"
    );
    assert!(!error.contains('\n'));
    assert!(prepare(&bytes[..20], BUDGET).is_err());
}

#[test]
fn random_bytes_are_an_error() {
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert_eq!(prepare(&noise, BUDGET), Err(NOT_AN_IMAGE.to_string()));
    for magic in [
        b"\x89PNG\r\n\x1a\n".as_slice(),
        b"\xff\xd8\xff",
        b"GIF89a",
        b"RIFF\0\0\0\0WEBP",
    ] {
        let bytes = [magic, &noise].concat();
        assert!(prepare(&bytes, BUDGET).is_err(), "{magic:?}");
    }
    assert!(prepare(&[], BUDGET).is_err());
}

#[test]
fn oversized_header_is_refused_before_decoding() {
    let mut bytes = Vec::new();
    let pixels = RgbaImage::from_pixel(4, 4, Rgba([1, 2, 3, 255]));
    GifEncoder::new(&mut bytes)
        .encode_frame(Frame::new(pixels))
        .expect("encode gif");
    bytes[6..10].copy_from_slice(&[0x30, 0x75, 0x30, 0x75]); // 30000x30000
    let error = prepare(&bytes, BUDGET).expect_err("oversized");
    assert!(error.contains("30000x30000"), "{error}");
}

/// CRC-32 (as PNG chunks use), for forging a header.
fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |crc, &byte| {
        (0..8).fold(crc ^ u32::from(byte), |c, _| {
            (c >> 1) ^ (0xEDB8_8320 & 0u32.wrapping_sub(c & 1))
        })
    })
}

#[test]
fn huge_png_header_hits_the_memory_limit() {
    let mut bytes = encoded(&gradient(8, 8), ImageFormat::Png);
    let side = 19_000u32.to_be_bytes();
    bytes[16..20].copy_from_slice(&side);
    bytes[20..24].copy_from_slice(&side);
    bytes[25] = 6; // RGBA: 19000 x 19000 x 4 bytes is over 512 MiB
    let crc = crc32(&bytes[12..29]).to_be_bytes();
    bytes[29..33].copy_from_slice(&crc);
    let error = prepare(&bytes, BUDGET).expect_err("over the limit");
    assert!(error.contains("19000x19000"), "{error}");
}

#[test]
fn tiny_budget_forces_the_jpeg_fallback() {
    let image = gradient(1200, 900);
    let bytes = encoded(&image, ImageFormat::Png);
    let small = resize_to(&image, fit_within(image.dimensions(), LAST_RESORT_SIDE));
    let last = encode(&small, Encoding::Jpeg(LAST_RESORT_QUALITY)).expect("encode");
    let prepared = prepare(&bytes, tokens_of(last.len()) + 50).expect("prepared");
    assert_eq!(prepared.media_type, "image/jpeg");
    assert_eq!(prepared.original, (1200, 900));
    assert_eq!(prepared.sent, (400, 300));
    sent_image(&prepared);
}

#[test]
fn aggressive_step_lowers_quality_and_size() {
    let bytes = encoded(&gradient(1200, 900), ImageFormat::Png);
    let prepared = prepare(&bytes, 20_000).expect("prepared");
    assert_eq!(prepared.media_type, "image/jpeg");
    assert!(prepared.sent.0 > LAST_RESORT_SIDE, "{:?}", prepared.sent);
    assert!(estimate_tokens(prepared.data.len()) <= 20_000);
}

#[test]
fn impossible_budget_is_an_error() {
    let bytes = encoded(&gradient(1200, 900), ImageFormat::Png);
    let error = prepare(&bytes, 10).expect_err("impossible");
    assert!(
        error.contains("1200x900") && error.contains("400x300"),
        "{error}"
    );
}

#[test]
fn alpha_is_flattened_onto_white_for_jpeg() {
    let mut pixels = RgbaImage::from_pixel(16, 16, Rgba([0, 0, 0, 0]));
    pixels.put_pixel(0, 0, Rgba([0, 0, 0, 255]));
    let bytes = encode(&DynamicImage::ImageRgba8(pixels), Encoding::Jpeg(90)).expect("encode");
    let decoded = image::load_from_memory(&bytes).expect("decode").to_rgb8();
    assert!(decoded.get_pixel(12, 12).0.iter().all(|&c| c > 245));
    assert_eq!(over_white(0, 128), 127);
    assert_eq!(over_white(200, 255), 200);
}

#[test]
fn area_resize_averages_what_each_pixel_covers() {
    let source = image::GrayImage::from_fn(4, 2, |x, y| image::Luma([(x * 10 + y * 40) as u8]));
    let halved = resize_to(&DynamicImage::ImageLuma8(source), (2, 1)).to_luma8();
    assert_eq!(halved.as_raw(), &[25, 45]);
    let row = image::GrayImage::from_raw(3, 1, vec![0, 30, 60]).expect("3x1");
    let thirds = resize_to(&DynamicImage::ImageLuma8(row), (2, 1)).to_luma8();
    assert_eq!(thirds.as_raw(), &[10, 50]);
    let flat = RgbImage::from_pixel(7, 5, Rgb([200, 100, 7]));
    let shrunk = resize_to(&DynamicImage::ImageRgb8(flat), (3, 2)).to_rgb8();
    assert!(shrunk.pixels().all(|pixel| pixel.0 == [200, 100, 7]));
}

#[test]
fn fit_within_keeps_aspect() {
    assert_eq!(fit_within((6000, 4000), 2000), (2000, 1333));
    assert_eq!(fit_within((100, 50), 2000), (100, 50));
    assert_eq!(fit_within((1, 30000), 2000), (1, 2000));
    assert_eq!(fit_within((3000, 3000), 400), (400, 400));
}

#[test]
fn estimate_tokens_rounds_up() {
    assert_eq!(estimate_tokens(0), 0);
    assert_eq!(estimate_tokens(1), 1);
    assert_eq!(estimate_tokens(8), 1);
    assert_eq!(estimate_tokens(9), 2);
    assert_eq!(estimate_tokens(200_000), 25_000);
}

#[test]
fn sniff_knows_each_magic_number() {
    assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
    assert_eq!(sniff(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
    assert_eq!(sniff(b"GIF87a.."), Some("image/gif"));
    assert_eq!(sniff(b"GIF89a.."), Some("image/gif"));
    assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some("image/webp"));
    assert_eq!(sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
    assert_eq!(sniff(b"%PDF-1.7\n"), None);
    assert_eq!(sniff(b"PK\x03\x04\x14\0"), None);
    assert_eq!(sniff(b"hello, world\n"), None);
    assert_eq!(sniff(b""), None);
}

/// Every colour type the streaming path takes gives exactly what decoding the whole image and
/// then shrinking it gives.
#[test]
fn streamed_png_matches_decoding_whole_then_shrinking() {
    let rgb = gradient(2300, 700);
    let mut rgba = rgb.to_rgba8();
    for (x, _, pixel) in rgba.enumerate_pixels_mut() {
        pixel.0[3] = (x % 256) as u8;
    }
    let cases = [
        rgb.clone(),
        DynamicImage::ImageRgba8(rgba),
        DynamicImage::ImageLuma8(rgb.to_luma8()),
        DynamicImage::ImageLumaA8(rgb.to_luma_alpha8()),
        DynamicImage::ImageRgb16(rgb.to_rgb16()),
    ];
    for image in cases {
        let bytes = encoded(&image, ImageFormat::Png);
        let size = image.dimensions();
        let target = fit_within(size, MAX_SIDE);
        let streamed = png_stream::decode_shrunk(&bytes, size, target, MAX_DECODE_ALLOC)
            .expect("a case that streams")
            .expect("decodes");
        let whole = decode(&bytes, ImageFormat::Png, size).expect("decodes");
        let whole = resize_to(&into_8bit(whole), target);
        assert_eq!(streamed.dimensions(), target);
        assert_eq!(streamed.color(), whole.color(), "{:?}", image.color());
        assert!(
            streamed.as_bytes() == whole.as_bytes(),
            "{:?}: the streamed pixels differ",
            image.color()
        );
    }
}

#[test]
fn a_large_png_cut_short_is_refused_with_the_decoders_reason() {
    let bytes = encoded(&gradient(2300, 700), ImageFormat::Png);
    let error = prepare(&bytes[..bytes.len() / 2], BUDGET).expect_err("cut short");
    assert!(
        error.starts_with("The image could not be decoded: "),
        "{error}"
    );
}

/// The sampled JPEG estimate is close to what encoding the whole image costs, for a noisy
/// picture and for a flat one with sharp edges.
#[test]
fn a_sampled_jpeg_estimate_is_near_the_real_cost() {
    let blocks = DynamicImage::ImageRgb8(RgbImage::from_fn(1800, 1200, |x, y| {
        Rgb([
            (x / 40 * 13) as u8,
            (y / 30 * 7) as u8,
            ((x / 40 + y / 30) * 5) as u8,
        ])
    }));
    for image in [gradient(1800, 1200), blocks] {
        for side in [1800, 1200] {
            let size = fit_within(image.dimensions(), side);
            let sampled = jpeg_cost::sampled(&image, size)
                .expect("encodes")
                .expect("large enough to sample");
            let scaled = downscale(&image, side).unwrap_or_else(|| image.clone());
            let whole = encode(&scaled, Encoding::Jpeg(80)).expect("encodes");
            let real = tokens_of(whole.len()) as f64 / pixels(size);
            let ratio = sampled / real;
            assert!(
                (0.8..1.25).contains(&ratio),
                "at {size:?}: sampled {sampled:.4} tokens/pixel, real {real:.4}"
            );
        }
    }
}
