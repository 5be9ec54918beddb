//! Conversation view benchmarks: a frame of a 10,000-entry session (render + TestBackend diff),
//! the first frame after building it, scrolling, and streaming at 2,000 tokens/s with a frame
//! every 16 ms. Also prints the heap held by a 10,000-entry session (counting allocator).
//! Figures go in docs/bench/tui.md.

use std::hint::black_box;
use std::sync::atomic::Ordering;

use cairn::protocol::{Display, Event};
use cairn::tui::conversation::{Conversation, NoticeKind, ScrollState};
use cairn::tui::highlight::Highlighter;
use criterion::{BatchSize, Criterion};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::LIVE;

const ANSWER: &str = "Here is what I found in **src/lib.rs**:\n\n- the parser keeps a `Vec` of tokens\n\
- errors carry their span\n\n```rust\nfn parse(input: &str) -> Result<Ast, Error> {\n    todo!()\n}\n```\n";

/// A session of `n` entries cycling through the kinds of cell.
fn session(n: usize) -> Conversation {
    let mut c = Conversation::new(Highlighter::plain());
    for i in 0..n {
        match i % 5 {
            0 => c.push_user(&format!("question {i}: why does the build fail on CI?")),
            1 => {
                c.apply_event(&Event::TextDelta {
                    text: ANSWER.to_string(),
                });
                c.apply_event(&Event::AssistantMessage {
                    content: json!([]),
                    incomplete: false,
                });
            }
            2 | 3 => {
                let id = format!("call{i}");
                c.apply_event(&Event::ToolCallStarted {
                    call_id: id.clone(),
                    tool: "Read".into(),
                    title: format!("Read src/file{i}.rs (lines 1-40)"),
                    input: json!({}),
                    kind: Default::default(),
                });
                c.apply_event(&Event::ToolCallFinished {
                    call_id: id,
                    is_error: false,
                    display: Display::Text {
                        text: (1..=40).map(|l| format!("{l:>6}\tline {l}\n")).collect(),
                    },
                    outcome: None,
                });
            }
            _ => c.push_notice(NoticeKind::Info, "src/lib.rs changed on disk"),
        }
    }
    c
}

fn frame(terminal: &mut Terminal<TestBackend>, c: &mut Conversation, s: &mut ScrollState) {
    let _ = terminal.draw(|f| c.render(f.area(), f.buffer_mut(), s));
}

fn terminal() -> Terminal<TestBackend> {
    match Terminal::new(TestBackend::new(160, 50)) {
        Ok(t) => t,
        Err(e) => panic!("test backend: {e}"),
    }
}

fn benches(c: &mut Criterion) {
    let mut term = terminal();
    let mut conv = session(10_000);
    let mut scroll = ScrollState::default();
    frame(&mut term, &mut conv, &mut scroll);

    c.bench_function("frame_10k_entries_following", |b| {
        b.iter(|| {
            // A spinner tick or a delta elsewhere: redraw the unchanged bottom.
            frame(&mut term, &mut conv, &mut scroll);
        })
    });

    c.bench_function("frame_5_entries_following", |b| {
        let mut small = session(5);
        let mut s = ScrollState::default();
        b.iter(|| frame(&mut term, &mut small, &mut s))
    });

    c.bench_function("frame_10k_entries_after_resize", |b| {
        // Alternate between two widths: every visible cell is wrapped again each frame.
        let mut wide = terminal();
        let mut narrow = match Terminal::new(TestBackend::new(100, 50)) {
            Ok(t) => t,
            Err(e) => panic!("test backend: {e}"),
        };
        let mut s = ScrollState::default();
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            let t = if flip { &mut narrow } else { &mut wide };
            frame(t, &mut conv, &mut s);
        })
    });

    c.bench_function("frame_10k_entries_scrolling_up", |b| {
        let mut s = ScrollState::default();
        frame(&mut term, &mut conv, &mut s);
        b.iter(|| {
            s.scroll_up(3);
            frame(&mut term, &mut conv, &mut s);
            if s.is_following() {
                s.to_bottom();
            }
        })
    });

    c.bench_function("first_frame_10k_entries_cold_cache", |b| {
        b.iter_batched(
            || (session(10_000), ScrollState::default(), terminal()),
            |(mut conv, mut s, mut t)| {
                frame(&mut t, &mut conv, &mut s);
                black_box(conv)
            },
            BatchSize::PerIteration,
        )
    });

    // 2,000 tokens/s at one frame per 16 ms: 32 tokens of ~4 bytes per frame.
    c.bench_function("stream_32_tokens_then_frame_10k_entries", |b| {
        let mut conv = session(10_000);
        let mut s = ScrollState::default();
        let words = [
            "the ",
            "parser ",
            "keeps ",
            "a **list** ",
            "of `tokens`",
            ".\n\n",
        ];
        let mut k = 0usize;
        b.iter(|| {
            for _ in 0..32 {
                conv.apply_event(&Event::TextDelta {
                    text: words[k % words.len()].to_string(),
                });
                k += 1;
            }
            frame(&mut term, &mut conv, &mut s);
        })
    });
}

fn report_memory() {
    let before = LIVE.load(Ordering::Relaxed);
    let mut conv = session(10_000);
    let built = LIVE.load(Ordering::Relaxed);
    let mut term = terminal();
    let mut s = ScrollState::default();
    frame(&mut term, &mut conv, &mut s);
    // Walk the whole session so every cell has its wrapped lines cached.
    s.to_top();
    loop {
        frame(&mut term, &mut conv, &mut s);
        if s.is_following() {
            break;
        }
        s.page_down();
    }
    let cached = LIVE.load(Ordering::Relaxed);
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    println!(
        "memory of a 10,000-entry session: {:.1} MiB built, {:.1} MiB with every cell's lines cached at 160 columns",
        mib(built.saturating_sub(before)),
        mib(cached.saturating_sub(before)),
    );
    black_box(conv);
}

fn main() {
    report_memory();
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
}
