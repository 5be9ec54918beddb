//! Large results: keep head and tail, spill the whole text to a file the model can Read.
//!
//! Placeholder with the final signature; replaced by the search/shell work.

use std::path::Path;

/// Return `content` if it fits in `max_chars`, else head + marker + tail and the spill path.
pub fn limit_result(content: String, max_chars: usize, spill_dir: &Path, call_id: &str) -> String {
    if content.chars().count() <= max_chars {
        return content;
    }
    let half = max_chars / 2;
    let head: String = content.chars().take(half).collect();
    let total = content.chars().count();
    let tail: String = content.chars().skip(total - half).collect();
    let path = spill_dir.join(format!("{call_id}.txt"));
    let saved = std::fs::create_dir_all(spill_dir)
        .and_then(|_| std::fs::write(&path, &content))
        .is_ok();
    let note = if saved {
        format!("Full output saved to {}", path.display())
    } else {
        "The full output could not be saved.".to_string()
    };
    format!(
        "{head}\n[... {} characters truncated ...]\n{tail}\n{note}",
        total - 2 * half
    )
}
