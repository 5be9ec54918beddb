//! What a request cost and how much context a model holds, from the model name alone.
//!
//! Prices are USD per million tokens, list prices as published by Anthropic and OpenAI. Claude
//! cache writes cost 1.25x and cache reads 0.1x of the input price; OpenAI cached input has its
//! own published price. Unknown and local models (Ollama, vLLM) cost 0: a guess would be worse
//! than nothing. Matching is by substring of the lower-cased name, so dated ids
//! (`claude-sonnet-4-5-20250929`) and routed ids (`anthropic/claude-3-5-haiku`) work.

use crate::protocol::Usage;

/// Per-million-token prices.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Prices {
    input: f64,
    output: f64,
    cache_write: f64,
    cache_read: f64,
}

fn claude(input: f64, output: f64) -> Prices {
    Prices {
        input,
        output,
        cache_write: input * 1.25,
        cache_read: input * 0.1,
    }
}

fn openai(input: f64, cached: f64, output: f64) -> Prices {
    Prices {
        input,
        output,
        cache_write: input,
        cache_read: cached,
    }
}

fn prices(model: &str) -> Option<Prices> {
    let m = model.to_ascii_lowercase();
    let has = |s: &str| m.contains(s);
    if has("claude") || has("opus") || has("sonnet") || has("haiku") {
        return Some(if has("opus") {
            if has("4-5") || has("4.5") || has("4-6") || has("4.6") {
                claude(5.0, 25.0)
            } else {
                claude(15.0, 75.0)
            }
        } else if has("haiku") {
            if has("haiku-4") {
                claude(1.0, 5.0)
            } else if has("3-5-haiku") || has("haiku-3-5") || has("3.5-haiku") {
                claude(0.8, 4.0)
            } else {
                claude(0.25, 1.25)
            }
        } else {
            // Sonnet, and any other Claude: the middle of the range.
            claude(3.0, 15.0)
        });
    }
    let table: &[(&str, Prices)] = &[
        ("gpt-4o-mini", openai(0.15, 0.075, 0.6)),
        ("gpt-4o", openai(2.5, 1.25, 10.0)),
        ("gpt-4.1-nano", openai(0.1, 0.025, 0.4)),
        ("gpt-4.1-mini", openai(0.4, 0.1, 1.6)),
        ("gpt-4.1", openai(2.0, 0.5, 8.0)),
        ("o1-mini", openai(1.1, 0.55, 4.4)),
        ("o1", openai(15.0, 7.5, 60.0)),
        ("o3-mini", openai(1.1, 0.55, 4.4)),
        ("o3", openai(2.0, 0.5, 8.0)),
        ("o4-mini", openai(1.1, 0.275, 4.4)),
    ];
    let name = m.rsplit('/').next().unwrap_or(&m);
    table
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|(_, p)| *p)
}

/// The cost in USD of one request's `usage` on `model`; 0 for unknown and local models.
pub fn cost_usd(model: &str, usage: &Usage) -> f64 {
    let Some(p) = prices(model) else {
        return 0.0;
    };
    let per_million = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
    per_million(usage.input_tokens, p.input)
        + per_million(usage.output_tokens, p.output)
        + per_million(usage.cache_creation_input_tokens, p.cache_write)
        + per_million(usage.cache_read_input_tokens, p.cache_read)
}

/// How many tokens of context `model` holds: 200k for Claude, 128k when unknown.
pub fn context_window(model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    let name = m.rsplit('/').next().unwrap_or(&m);
    if m.contains("claude") {
        200_000
    } else if name.starts_with("gpt-4.1") {
        1_047_576
    } else if ["o1", "o3", "o4"].iter().any(|p| name.starts_with(p)) {
        200_000
    } else {
        128_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, write: u64, read: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: write,
            cache_read_input_tokens: read,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn claude_families_with_cache_multipliers() {
        let u = usage(1_000_000, 1_000_000, 1_000_000, 1_000_000);
        // sonnet: 3 + 15 + 3.75 + 0.3
        assert!(close(cost_usd("claude-sonnet-4-5-20250929", &u), 22.05));
        // opus 4.1: 15 + 75 + 18.75 + 1.5
        assert!(close(cost_usd("claude-opus-4-1", &u), 110.25));
        assert!(close(
            cost_usd("claude-opus-4-5", &u),
            5.0 + 25.0 + 6.25 + 0.5
        ));
        assert!(close(
            cost_usd("claude-haiku-4-5", &u),
            1.0 + 5.0 + 1.25 + 0.1
        ));
        assert!(close(
            cost_usd("claude-3-5-haiku-20241022", &u),
            0.8 + 4.0 + 1.0 + 0.08
        ));
        assert!(close(
            cost_usd("claude-3-haiku-20240307", &u),
            0.25 + 1.25 + 0.3125 + 0.025
        ));
    }

    #[test]
    fn openai_and_unknown_models() {
        let u = usage(1_000_000, 1_000_000, 0, 1_000_000);
        assert!(close(cost_usd("gpt-4o", &u), 2.5 + 10.0 + 1.25));
        assert!(close(cost_usd("gpt-4o-mini", &u), 0.15 + 0.6 + 0.075));
        assert!(close(cost_usd("gpt-4.1", &u), 2.0 + 8.0 + 0.5));
        assert!(close(cost_usd("openai/o3", &u), 2.0 + 8.0 + 0.5));
        assert_eq!(cost_usd("llama3.1:8b", &u), 0.0);
        assert_eq!(cost_usd("qwen2.5-coder", &u), 0.0);
    }

    #[test]
    fn context_windows() {
        assert_eq!(context_window("claude-sonnet-4-5"), 200_000);
        assert_eq!(context_window("gpt-4o"), 128_000);
        assert_eq!(context_window("gpt-4.1-mini"), 1_047_576);
        assert_eq!(context_window("o3"), 200_000);
        assert_eq!(context_window("llama3.1:8b"), 128_000);
    }
}
