//! How much one Read may return, as the design notes give it: a size limit checked before
//! reading (a whole-file Read of a text file over 256 KB is refused) and a token limit checked
//! after (output over 25,000 tokens is refused). Both refusals tell the model to read a part with
//! `offset`/`limit` or to search with Grep. The token count is a cheap estimate first; only
//! output whose estimate comes near the limit is counted more closely.

use crate::tools::ToolError;

/// A whole-file Read of a larger text file is refused.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024;
/// Output of more tokens is refused.
pub const DEFAULT_MAX_TOKENS: u64 = 25_000;
/// The environment variables that override [`DEFAULT_MAX_TOKENS`], first found wins.
pub const MAX_TOKENS_ENV: [&str; 2] = [
    "CAIRN_FILE_READ_MAX_OUTPUT_TOKENS",
    "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS",
];

const HINT: &str = "Use the offset and limit parameters to read a part of the file, or use Grep \
                    to search for specific content.";

/// The limits of one Read tool, fixed when the session starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    pub max_bytes: u64,
    pub max_tokens: u64,
}

impl Default for ReadLimits {
    fn default() -> ReadLimits {
        ReadLimits {
            max_bytes: DEFAULT_MAX_BYTES,
            max_tokens: DEFAULT_MAX_TOKENS,
        }
    }
}

impl ReadLimits {
    /// The defaults, with the token limit from the environment when a variable of
    /// [`MAX_TOKENS_ENV`] holds a positive number (anything else is ignored).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> ReadLimits {
        let max_tokens = MAX_TOKENS_ENV
            .iter()
            .find_map(|name| var(name).and_then(|v| v.trim().parse::<u64>().ok()))
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_MAX_TOKENS);
        ReadLimits {
            max_tokens,
            ..ReadLimits::default()
        }
    }

    /// Before reading a text file whole (no `offset` and no `limit`).
    pub fn check_size(&self, size: u64) -> Result<(), ToolError> {
        if size <= self.max_bytes {
            return Ok(());
        }
        Err(ToolError::new(format!(
            "File content ({}) exceeds the maximum size of a whole-file read ({}). {HINT}",
            kib(size),
            kib(self.max_bytes)
        )))
    }

    /// After reading: the output the model would get.
    pub fn check_tokens(&self, output: &str) -> Result<(), ToolError> {
        let estimate = estimate_tokens(output);
        // The estimate errs high: far below the limit, nothing more is needed.
        if estimate <= self.max_tokens / 4 {
            return Ok(());
        }
        let count = count_tokens(output);
        if count <= self.max_tokens {
            return Ok(());
        }
        Err(ToolError::new(format!(
            "File content ({count} tokens) exceeds the maximum allowed tokens ({}). {HINT}",
            self.max_tokens
        )))
    }
}

fn kib(bytes: u64) -> String {
    format!("{} KB", bytes.div_ceil(1024))
}

/// The cheap estimate: a token per four bytes.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// A closer count, shaped like a BPE tokenizer's on code and prose: a run of letters and digits
/// costs a token per four bytes (at least one), any other visible character a token of its own,
/// a line break one, and spaces nothing (they join the word after them). It works on bytes (a
/// non-ASCII byte counts as part of a word), so it costs little more than the estimate.
pub fn count_tokens(text: &str) -> u64 {
    let mut tokens = 0u64;
    let mut run = 0u64;
    for &b in text.as_bytes() {
        match BYTE_CLASS[usize::from(b)] {
            WORD => run += 1,
            class => {
                tokens += (run + 3) >> 2;
                run = 0;
                tokens += u64::from(class == TOKEN);
            }
        }
    }
    tokens + ((run + 3) >> 2)
}

const WORD: u8 = 0;
const SPACE: u8 = 1;
const TOKEN: u8 = 2;

/// What each byte is to [`count_tokens`]: part of a word, a space, or a token of its own.
static BYTE_CLASS: [u8; 256] = {
    let mut table = [TOKEN; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            WORD
        } else if c != b'\n' && c.is_ascii_whitespace() {
            SPACE
        } else {
            TOKEN
        };
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_limit_is_inclusive_and_says_what_to_do() {
        let limits = ReadLimits::default();
        assert!(limits.check_size(256 * 1024).is_ok());
        let err = limits.check_size(256 * 1024 + 1).unwrap_err().message;
        assert_eq!(
            err,
            "File content (257 KB) exceeds the maximum size of a whole-file read (256 KB). Use \
             the offset and limit parameters to read a part of the file, or use Grep to search \
             for specific content."
        );
    }

    #[test]
    fn tokens_are_estimated_then_counted_near_the_limit() {
        let limits = ReadLimits {
            max_tokens: 100,
            ..ReadLimits::default()
        };
        // 100 bytes: the estimate (25) is at a quarter of the limit, so no count is needed.
        assert!(limits.check_tokens(&"a".repeat(100)).is_ok());
        // Long words are cheap: 4 characters a token.
        assert!(limits.check_tokens(&"abcd".repeat(100)).is_ok());
        // Punctuation is a token each.
        let err = limits.check_tokens(&";".repeat(101)).unwrap_err().message;
        assert!(
            err.starts_with("File content (101 tokens) exceeds the maximum allowed tokens (100).")
        );
        assert_eq!(count_tokens("fn main() {\n    x\n}"), 9);
    }

    #[test]
    fn the_environment_overrides_the_token_limit() {
        fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            move |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        }
        assert_eq!(ReadLimits::from_env(env(&[])).max_tokens, 25_000);
        let both = [
            ("CAIRN_FILE_READ_MAX_OUTPUT_TOKENS", "500"),
            ("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", "900"),
        ];
        assert_eq!(ReadLimits::from_env(env(&both)).max_tokens, 500);
        let claude = [("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", "900")];
        assert_eq!(ReadLimits::from_env(env(&claude)).max_tokens, 900);
        let bad = [("CAIRN_FILE_READ_MAX_OUTPUT_TOKENS", "lots")];
        assert_eq!(ReadLimits::from_env(env(&bad)).max_tokens, 25_000);
    }
}
