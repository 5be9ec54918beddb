//! The WebFetch tool: fetches one URL and returns it as text, HTML converted to Markdown.
//!
//! Invariants: plain http is upgraded to https except for loopback hosts (localhost,
//! 127.0.0.1, ::1); redirects are followed by hand, only within the same host and at most
//! [`MAX_REDIRECTS`] times — a redirect to another host comes back as a notice naming the new
//! URL, never followed silently; the whole fetch has one timeout; at most `max_bytes` of body
//! are read; the result holds at most [`MAX_RESULT_CHARS`] characters (the rest spills to a
//! file); pages are cached in memory for 15 minutes per URL. Concurrency-safe but not
//! read-only: it reaches the network, so it goes through permission.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;

mod page;
mod reader;

pub use page::{html_to_markdown, lead_with_matches};

use crate::protocol::{Display, Field};
use crate::session::context::SessionContext;
use crate::tools::spill::{head_tail, limit_result};
use crate::tools::{Access, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use page::{Kind, classify, sniff};

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
pub const MAX_RESULT_CHARS: usize = 50_000;
pub const MAX_REDIRECTS: usize = 5;
pub const CACHE_TTL: Duration = Duration::from_secs(15 * 60);
/// Pages kept in the cache; the oldest goes first.
const CACHE_ENTRIES: usize = 64;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchInput {
    /// http is upgraded to https.
    pub url: String,
    /// A question: a small model reads the page and its answer is the result.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Most characters (default and limit 50,000).
    #[serde(default)]
    pub max_length: Option<usize>,
}

/// A fetched page, as cached.
#[derive(Debug, Clone)]
struct Page {
    /// The URL the content came from (after same-host redirects).
    url: String,
    text: String,
    /// The body was larger than the download cap and was cut.
    cut: bool,
}

enum Fetched {
    Page(Page),
    /// A redirect to another host, not followed.
    Redirect {
        from: String,
        to: String,
        status: u16,
    },
}

/// Fetches web pages. Owns its HTTP client and its 15-minute cache.
pub struct WebFetchTool {
    timeout: Duration,
    max_bytes: usize,
    client: OnceLock<reqwest::Client>,
    /// For loopback hosts: never through a proxy from the environment.
    local_client: OnceLock<reqwest::Client>,
    cache: Mutex<HashMap<String, (Instant, Page)>>,
}

impl Default for WebFetchTool {
    fn default() -> Self {
        WebFetchTool::new()
    }
}

impl WebFetchTool {
    pub fn new() -> WebFetchTool {
        WebFetchTool::with_limits(DEFAULT_TIMEOUT, MAX_BODY_BYTES)
    }

    /// A tool with another timeout and download cap (tests use short ones).
    pub fn with_limits(timeout: Duration, max_bytes: usize) -> WebFetchTool {
        WebFetchTool {
            timeout,
            max_bytes,
            client: OnceLock::new(),
            local_client: OnceLock::new(),
            cache: Mutex::new(HashMap::new()),
        }
    }

    fn client(&self, loopback: bool) -> Result<&reqwest::Client, ToolError> {
        let slot = if loopback {
            &self.local_client
        } else {
            &self.client
        };
        if let Some(c) = slot.get() {
            return Ok(c);
        }
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.timeout)
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION"), " (WebFetch)"));
        if loopback {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| ToolError::new(format!("Could not set up the HTTP client: {e}")))?;
        Ok(slot.get_or_init(|| client))
    }

    fn cached(&self, url: &str) -> Option<Page> {
        let cache = match self.cache.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        cache
            .get(url)
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, page)| page.clone())
    }

    fn remember(&self, url: String, page: Page) {
        let mut cache = match self.cache.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        cache.retain(|_, (at, _)| at.elapsed() < CACHE_TTL);
        if cache.len() >= CACHE_ENTRIES
            && let Some(oldest) = cache
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
        {
            cache.remove(&oldest);
        }
        cache.insert(url, (Instant::now(), page));
    }

    /// GET `url`, following same-host redirects.
    async fn fetch(&self, url: Url) -> Result<Fetched, ToolError> {
        // Same-host redirects only, so one client serves the whole chain.
        let client = self.client(is_loopback(&url))?;
        let mut current = url;
        for hop in 0..=MAX_REDIRECTS {
            let mut resp = client
                .get(current.clone())
                .send()
                .await
                .map_err(|e| request_error(&current, &e, self.timeout))?;
            let status = resp.status();
            if status.is_redirection() {
                let location = resp
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| {
                        ToolError::new(format!(
                            "{current} answered {status} without a Location header."
                        ))
                    })?;
                let next = current.join(location).map_err(|e| {
                    ToolError::new(format!(
                        "{current} redirected to a bad URL `{location}`: {e}"
                    ))
                })?;
                let next = upgrade(next);
                if !same_host(&current, &next) {
                    return Ok(Fetched::Redirect {
                        from: current.to_string(),
                        to: next.to_string(),
                        status: status.as_u16(),
                    });
                }
                if hop == MAX_REDIRECTS {
                    break;
                }
                current = next;
                continue;
            }
            if !status.is_success() {
                return Err(ToolError::new(format!(
                    "Request failed with status {status} for {current}"
                )));
            }
            let content_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(|v| {
                    v.split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_ascii_lowercase()
                })
                .unwrap_or_default();
            let kind = classify(&content_type);
            if kind == Kind::Binary {
                return Err(binary_error(&current, &content_type));
            }
            let mut body = Vec::new();
            let mut cut = false;
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| request_error(&current, &e, self.timeout))?
            {
                let room = self.max_bytes - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    cut = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            let kind = match kind {
                Kind::Unknown => sniff(&body),
                k => k,
            };
            let raw = String::from_utf8_lossy(&body);
            let text = match kind {
                Kind::Binary => return Err(binary_error(&current, "unknown type")),
                Kind::Html => html_to_markdown(&raw)?,
                Kind::Text | Kind::Unknown => raw.into_owned(),
            };
            return Ok(Fetched::Page(Page {
                url: current.to_string(),
                text,
                cut,
            }));
        }
        Err(ToolError::new(format!(
            "Too many redirects (more than {MAX_REDIRECTS}) starting from {current}"
        )))
    }
}

#[async_trait]
impl Tool for WebFetchTool {
    type Input = WebFetchInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("WebFetch", ToolKind::Fetch)
            .aliases(&["web_fetch"])
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "Fetches a URL as Markdown (cached 15 minutes; long pages are cut and saved to a file \
         you can Read). A redirect to another host is reported: fetch the new URL."
            .to_string()
    }

    fn title(&self, input: &WebFetchInput, _ctx: &SessionContext) -> String {
        format!("WebFetch {}", input.url)
    }

    fn accesses(&self, input: &WebFetchInput, _ctx: &SessionContext) -> Vec<Access> {
        let url = parse_url(&input.url).map_or(input.url.clone(), |u| u.to_string());
        vec![Access::Fetch(url)]
    }

    async fn validate(&self, input: &WebFetchInput, _ctx: &ToolContext) -> Result<(), ToolError> {
        parse_url(&input.url).map(|_| ())
    }

    async fn preview(
        &self,
        input: &WebFetchInput,
        _ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let url = parse_url(&input.url)?;
        let mut fields = vec![
            Field::text("url", url.as_str()),
            Field::text("domain", url.host_str().unwrap_or_default()),
        ];
        if let Some(prompt) = input.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
            fields.push(Field::text("prompt", prompt));
        }
        Ok(Some(Preview {
            display: Display::Fields { fields },
            new_content: None,
        }))
    }

    fn max_result_chars(&self) -> Option<usize> {
        Some(MAX_RESULT_CHARS)
    }

    async fn call(&self, input: WebFetchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let url = parse_url(&input.url)?;
        let key = url.to_string();
        let page = match self.cached(&key) {
            Some(page) => page,
            None => {
                let fetched = tokio::select! {
                    r = tokio::time::timeout(self.timeout, self.fetch(url.clone())) => match r {
                        Ok(r) => r?,
                        Err(_) => return Err(timeout_error(&url, self.timeout)),
                    },
                    _ = ctx.cancel.cancelled() => {
                        return Err(ToolError::new("Interrupted by the user."));
                    }
                };
                match fetched {
                    Fetched::Page(page) => {
                        self.remember(key.clone(), page.clone());
                        page
                    }
                    Fetched::Redirect { from, to, status } => {
                        let text = format!(
                            "REDIRECT DETECTED: The URL redirects to a different host.\n\n\
                             Original URL: {from}\nRedirect URL: {to}\nStatus: {status}\n\n\
                             To fetch the content, call WebFetch again with url: \"{to}\"."
                        );
                        return Ok(ToolOutput::text(text));
                    }
                }
            }
        };
        let mut text = String::new();
        if page.url != key {
            text.push_str(&format!("(Redirected to {})\n\n", page.url));
        }
        let prompt = input
            .prompt
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty());
        match prompt {
            _ if page.text.trim().is_empty() => text.push_str("(empty response)"),
            Some(prompt) => {
                let read = match ctx.session.small_model() {
                    Some(model) => {
                        reader::read(model, &page.url, &page.text, prompt, &ctx.cancel).await
                    }
                    None => Err("no model to read it with".into()),
                };
                match read {
                    Ok(summary) => text.push_str(&summary),
                    Err(e) => {
                        text.push_str(&format!(
                            "(The page could not be summarised ({e}); here it is, the parts \
                             that mention the prompt first.)\n\n"
                        ));
                        text.push_str(&lead_with_matches(&page.text, prompt));
                    }
                }
            }
            None => text.push_str(&page.text),
        }
        if page.cut {
            text.push_str(&format!(
                "\n\n[The page is larger than {} MiB; only the first part was downloaded.]",
                self.max_bytes / (1024 * 1024)
            ));
        }
        let display = Display::Markdown {
            text: head_tail(&text, 20_000),
        };
        if let Some(max) = input.max_length
            && let Some((at, _)) = text.char_indices().nth(max)
        {
            let total = text.chars().count();
            text.truncate(at);
            text.push_str(&format!(
                "\n\n[Cut at max_length: {max} of {total} characters.]"
            ));
        }
        let content = limit_result(
            text,
            MAX_RESULT_CHARS,
            &ctx.session.data_dir.join("spill"),
            &ctx.call_id,
        );
        Ok(ToolOutput::with_display(content, display))
    }
}

/// Parse and check a URL from the model, upgrading http to https where that applies.
pub fn parse_url(raw: &str) -> Result<Url, ToolError> {
    let url = Url::parse(raw.trim()).map_err(|e| {
        ToolError::new(format!(
            "Invalid URL `{raw}`: {e}. Give a full http(s) URL."
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::new(format!(
            "Unsupported URL scheme `{}` in {raw}: WebFetch fetches http and https URLs only.",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ToolError::new(format!("The URL {raw} has no host.")));
    }
    Ok(upgrade(url))
}

/// http -> https, except for loopback hosts (local servers rarely speak TLS).
fn upgrade(mut url: Url) -> Url {
    if url.scheme() == "http" && !is_loopback(&url) {
        let _ = url.set_scheme("https");
    }
    url
}

fn is_loopback(url: &Url) -> bool {
    matches!(
        url.host_str(),
        Some("localhost" | "127.0.0.1" | "[::1]" | "::1")
    )
}

/// Same host, ignoring a leading `www.` (example.com -> www.example.com is not a new site).
fn same_host(a: &Url, b: &Url) -> bool {
    let strip = |u: &Url| {
        let h = u.host_str().unwrap_or("").to_ascii_lowercase();
        h.strip_prefix("www.").map(str::to_string).unwrap_or(h)
    };
    strip(a) == strip(b)
}

fn binary_error(url: &Url, content_type: &str) -> ToolError {
    ToolError::new(format!(
        "{url} returned binary content ({content_type}); WebFetch only returns text and HTML."
    ))
}

fn timeout_error(url: &Url, timeout: Duration) -> ToolError {
    ToolError::new(format!(
        "Request to {url} timed out after {} s",
        timeout.as_secs_f64()
    ))
}

/// A reqwest error with its causes, which carry the useful part ("connection refused").
fn request_error(url: &Url, e: &reqwest::Error, timeout: Duration) -> ToolError {
    if e.is_timeout() {
        return timeout_error(url, timeout);
    }
    let mut msg = format!("Request to {url} failed: {e}");
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    ToolError::new(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_is_upgraded_except_for_loopback() {
        assert_eq!(
            parse_url("http://example.com/a").unwrap().as_str(),
            "https://example.com/a"
        );
        assert_eq!(
            parse_url("http://127.0.0.1:8/a").unwrap().as_str(),
            "http://127.0.0.1:8/a"
        );
        assert_eq!(
            parse_url("http://localhost/").unwrap().as_str(),
            "http://localhost/"
        );
        assert_eq!(
            parse_url("http://[::1]:9/").unwrap().as_str(),
            "http://[::1]:9/"
        );
        assert!(
            parse_url("ftp://x/")
                .unwrap_err()
                .message
                .contains("Unsupported URL scheme")
        );
        assert!(
            parse_url("not a url")
                .unwrap_err()
                .message
                .starts_with("Invalid URL")
        );
    }

    #[test]
    fn www_prefix_is_the_same_host() {
        let a = Url::parse("https://example.com/").unwrap();
        assert!(same_host(
            &a,
            &Url::parse("https://www.example.com/x").unwrap()
        ));
        assert!(!same_host(&a, &Url::parse("https://evil.com/").unwrap()));
    }
}
