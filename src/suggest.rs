//! Close-name suggestions ("did you mean…?") for names people and models mistype: slash
//! commands, skills, tools. A pure function over strings (Levenshtein distance from `strsim`),
//! shared by the core, the tools and the TUI.

/// Up to three of `candidates` closest to `name` (Levenshtein, `strsim`), closest first; none
/// when nothing is near.
pub fn closest_names<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Vec<&'c str> {
    let lower = name.to_lowercase();
    let limit = lower.chars().count().max(3) / 2 + 1;
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= limit || (!lower.is_empty() && c.to_lowercase().starts_with(&lower)))
        .collect();
    scored.sort();
    let mut out: Vec<&str> = Vec::new();
    for (_, c) in scored {
        if !out.contains(&c) {
            out.push(c);
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}
