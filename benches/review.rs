//! Speed of the diff review widget: building a view and drawing frames of it.
//!
//! The targets: a prompt opens without a visible pause (building the view of a 2,000-line file
//! with 100 hunks well under a frame), and a steady frame costs far less than a 60 Hz budget
//! whatever the size of the diff, because only the visible rows are laid out.

use std::hint::black_box;
use std::path::PathBuf;

use cairn::tui::review::{DiffView, ReviewKey};
use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// `n` lines of code-like text, and the same with every `every`-th line edited a little.
fn texts(n: usize, every: usize) -> (String, String) {
    let before: String = (0..n)
        .map(|i| format!("    let value_{i} = compute(input, {i}) + offset;\n"))
        .collect();
    let after: String = (0..n)
        .map(|i| {
            if i % every == every / 2 {
                format!("    let value_{i} = compute(input, {}) - offset;\n", i + 1)
            } else {
                format!("    let value_{i} = compute(input, {i}) + offset;\n")
            }
        })
        .collect();
    (before, after)
}

fn bench(c: &mut Criterion) {
    let (before, after) = texts(2_000, 20);
    c.bench_function("review/new 2k lines 100 hunks", |b| {
        b.iter(|| {
            DiffView::new(
                PathBuf::from("src/lib.rs"),
                black_box(before.clone()),
                black_box(after.clone()),
            )
        })
    });

    let area = Rect::new(0, 0, 120, 40);
    c.bench_function("review/first frame 120x40", |b| {
        b.iter_batched(
            || DiffView::new(PathBuf::from("src/lib.rs"), before.clone(), after.clone()),
            |mut view| {
                let mut buf = Buffer::empty(area);
                view.render(area, &mut buf);
                buf
            },
            criterion::BatchSize::SmallInput,
        )
    });

    let mut view = DiffView::new(PathBuf::from("src/lib.rs"), before.clone(), after.clone());
    let mut buf = Buffer::empty(area);
    view.render(area, &mut buf);
    c.bench_function("review/steady frame 120x40", |b| {
        b.iter(|| view.render(area, black_box(&mut buf)))
    });

    let wide = Rect::new(0, 0, 200, 50);
    let mut buf = Buffer::empty(wide);
    let mut step = 0usize;
    c.bench_function("review/page + frame side by side 200x50", |b| {
        b.iter(|| {
            // Down through the diff and back up again, so every frame shows new rows.
            step += 1;
            let key = if step % 200 < 100 {
                ReviewKey::PageDown
            } else {
                ReviewKey::PageUp
            };
            view.handle_key(key);
            view.render(wide, black_box(&mut buf))
        })
    });

    let (big_before, big_after) = texts(50_000, 500);
    let mut big = DiffView::new(PathBuf::from("big.rs"), big_before, big_after);
    let mut buf = Buffer::empty(area);
    for _ in 0..40 {
        big.handle_key(ReviewKey::NextHunk);
    }
    big.render(area, &mut buf);
    c.bench_function("review/steady frame 50k-line file (plain)", |b| {
        b.iter(|| big.render(area, black_box(&mut buf)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
