//! WebFetch's reader: with a `prompt`, the page (as Markdown) goes with the prompt to the
//! session's small, fast model, and its answer is the result — marked as a summary with the
//! URL — instead of the page itself (as the design notes and Claude Code do). The page stays
//! in the fetch cache, so asking the same page something else costs no second download.

use tokio_util::sync::CancellationToken;

use crate::session::small_model::SmallModel;

/// The most of a page the reader is given, in characters.
pub const MAX_PAGE_CHARS: usize = 100_000;
/// The reader's answer, in tokens.
const MAX_ANSWER_TOKENS: u32 = 2048;

const SYSTEM: &str = "You answer a question about one web page using only the page's content. \
                      Be concise and exact; quote the page where wording matters. If the page \
                      does not answer the question, say so.";

/// The reader's answer to `prompt` about `page` (fetched from `url`), as the tool's result.
pub async fn read(
    model: &SmallModel,
    url: &str,
    page: &str,
    prompt: &str,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let (shown, cut) = match page.char_indices().nth(MAX_PAGE_CHARS) {
        Some((at, _)) => (&page[..at], true),
        None => (page, false),
    };
    let request = format!(
        "Web page content from {url}{}:\n---\n{shown}\n---\n\n{prompt}",
        if cut { " (first part)" } else { "" }
    );
    let answer = model
        .ask(SYSTEM, request, MAX_ANSWER_TOKENS, cancel)
        .await?;
    if answer.trim().is_empty() {
        return Err("the model's answer was empty".into());
    }
    Ok(format!(
        "Summary of {url} by {} for the prompt \"{}\" (the page itself is not in this \
         result; fetch again with another prompt to ask something else):\n\n{}",
        model.model,
        prompt.trim(),
        answer.trim()
    ))
}
