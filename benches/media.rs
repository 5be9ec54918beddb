//! Read's media readers, pure parts: an image prepared within the token budget (a 6000x4000
//! PNG, once compressible like a screenshot, once noisy like a photo saved as PNG) and a PDF
//! page range. Run: `cargo bench --bench media`.

use std::hint::black_box;
use std::io::Cursor;

use cairn::media::{image as budget, pdf};
use criterion::{Criterion, criterion_group, criterion_main};

fn png(w: u32, h: u32, noisy: bool) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        if noisy {
            let v = x
                .wrapping_mul(2654435761)
                .wrapping_add(y.wrapping_mul(40503))
                >> 7;
            image::Rgb([(v & 0xff) as u8, (x % 251) as u8, (y % 241) as u8])
        } else {
            image::Rgb([(x / 24) as u8, (y / 16) as u8, 128])
        }
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

fn bench_images(c: &mut Criterion) {
    let mut group = c.benchmark_group("image");
    group.sample_size(10);
    for (name, noisy) in [("screenshot-like", false), ("noisy", true)] {
        let bytes = png(6000, 4000, noisy);
        group.bench_function(format!("prepare a 6000x4000 PNG, {name}"), |b| {
            b.iter(|| budget::prepare(black_box(&bytes), 25_000).unwrap())
        });
    }
    group.finish();
}

fn bench_pdf(c: &mut Criterion) {
    let pages: Vec<String> = (1..=100)
        .map(|i| {
            format!(
                "Page {i}\n{}",
                "Lorem ipsum dolor sit amet, consectetur.\n".repeat(40)
            )
        })
        .collect();
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    let bytes = pdf::build_test_pdf(&pages);
    let range = pdf::parse_pages("40-59").unwrap();
    c.bench_function(
        "PDF: load a 100-page document and extract pages 40-59",
        |b| {
            b.iter(|| {
                let doc = pdf::Pdf::load(black_box(&bytes)).unwrap();
                pdf::render(&doc.pages_text(range).unwrap())
            })
        },
    );
}

criterion_group!(benches, bench_images, bench_pdf);
criterion_main!(benches);
