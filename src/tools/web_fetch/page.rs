//! What WebFetch does with a body once it has it: deciding whether it is HTML, text or binary,
//! turning HTML into Markdown without scripts and styles, and putting the parts that match the
//! caller's prompt first. Pure functions: no network, no state.

use crate::tools::ToolError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Html,
    Text,
    Binary,
    /// No content type: decided by looking at the body.
    Unknown,
}

pub(super) fn classify(content_type: &str) -> Kind {
    match content_type {
        "" => Kind::Unknown,
        "text/html" | "application/xhtml+xml" => Kind::Html,
        t if t.starts_with("text/")
            || t.ends_with("+json")
            || t.ends_with("+xml")
            || matches!(
                t,
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/x-javascript"
                    | "application/ecmascript"
                    | "application/x-yaml"
                    | "application/yaml"
                    | "application/toml"
                    | "application/x-sh"
                    | "application/ld+json"
            ) =>
        {
            Kind::Text
        }
        _ => Kind::Binary,
    }
}

pub(super) fn sniff(body: &[u8]) -> Kind {
    let head = &body[..body.len().min(8192)];
    if head.contains(&0) {
        return Kind::Binary;
    }
    let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
    if lower.contains("<html") || lower.contains("<!doctype html") {
        Kind::Html
    } else {
        Kind::Text
    }
}

/// HTML to Markdown without scripts, styles and other non-content; the title leads.
pub fn html_to_markdown(html: &str) -> Result<String, ToolError> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "svg", "iframe", "head",
        ])
        .build();
    let body = converter
        .convert(html)
        .map_err(|e| ToolError::new(format!("Could not convert the HTML page: {e}")))?;
    let title = title_of(html);
    Ok(match title {
        Some(t) if !body.contains(&t) => format!("# {t}\n\n{body}"),
        _ => body,
    })
}

fn title_of(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let t = html[open_end..close]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!t.is_empty()).then_some(t)
}

/// The page with the paragraphs that mention the prompt's words first (most words first),
/// followed by the whole page.
pub fn lead_with_matches(text: &str, prompt: &str) -> String {
    const STOP: &[&str] = &[
        "the", "and", "for", "what", "how", "does", "with", "this", "that", "from", "are", "about",
        "which", "when", "where", "who", "why", "find", "page", "tell", "show", "list", "into",
    ];
    let words: Vec<String> = prompt
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOP.contains(&w.as_str()))
        .fold(Vec::new(), |mut v, w| {
            if !v.contains(&w) {
                v.push(w);
            }
            v
        });
    let mut scored: Vec<(usize, usize, &str)> = text
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .enumerate()
        .filter_map(|(i, p)| {
            let lower = p.to_lowercase();
            let score = words.iter().filter(|w| lower.contains(w.as_str())).count();
            (score > 0).then_some((score, i, p))
        })
        .collect();
    if scored.is_empty() {
        return format!("(No part of the page mentions: {prompt})\n\n{text}");
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut lead = String::new();
    for (_, _, p) in scored.iter().take(10) {
        if lead.len() + p.len() > 10_000 && !lead.is_empty() {
            break;
        }
        lead.push_str(p);
        lead.push_str("\n\n");
    }
    format!("## Parts that mention: {prompt}\n\n{lead}## Full page\n\n{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let md = html_to_markdown(
            "<html><head><title>T1</title><style>p{}</style></head><body><h1>Hello</h1>\
             <script>alert(1)</script><p>Some <b>bold</b> text</p></body></html>",
        )
        .unwrap();
        assert!(md.starts_with("# T1\n\n"), "{md}");
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("Some **bold** text"), "{md}");
        assert!(!md.contains("alert") && !md.contains("p{}"), "{md}");
    }

    #[test]
    fn prompt_words_bring_their_paragraphs_first() {
        let text = "Intro here.\n\nInstall with cargo.\n\nLicense MIT.\n\nCargo install flags.";
        let out = lead_with_matches(text, "How to install with cargo?");
        assert!(
            out.starts_with(
                "## Parts that mention: How to install with cargo?\n\nInstall with cargo.\n\n\
             Cargo install flags.\n\n## Full page\n\nIntro here."
            ),
            "{out}"
        );
    }

    #[test]
    fn content_types_are_classified() {
        assert_eq!(classify("text/html"), Kind::Html);
        assert_eq!(classify("application/json"), Kind::Text);
        assert_eq!(classify("image/png"), Kind::Binary);
        assert_eq!(sniff(b"<!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(sniff(b"a\0b"), Kind::Binary);
    }
}
