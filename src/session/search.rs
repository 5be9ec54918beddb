//! The session's web search service, as the WebSearch tool sees it: one query in, the hits
//! (and, from a provider's own search, its short cited answer) out. Which service answers —
//! the provider's server-side search, SearXNG, Brave, Tavily — is decided when the session
//! opens; the tool only asks.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

/// Search services cairn can ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchProvider {
    /// A SearXNG instance's JSON API (`/search?q=..&format=json`), no key needed.
    Searxng,
    /// Brave Search's web search API (`X-Subscription-Token`).
    Brave,
    /// Tavily's search API (a bearer key).
    Tavily,
}

impl SearchProvider {
    pub fn name(self) -> &'static str {
        match self {
            SearchProvider::Searxng => "searxng",
            SearchProvider::Brave => "brave",
            SearchProvider::Tavily => "tavily",
        }
    }

    pub fn parse(text: &str) -> Option<SearchProvider> {
        match text.trim().to_ascii_lowercase().as_str() {
            "searxng" => Some(SearchProvider::Searxng),
            "brave" => Some(SearchProvider::Brave),
            "tavily" => Some(SearchProvider::Tavily),
            _ => None,
        }
    }
}

/// The `webSearch` setting as read (`config::web_search` reads it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearchSetting {
    pub provider: SearchProvider,
    /// The service's address (required for SearXNG; the others have a default).
    pub url: Option<String>,
    /// The environment variable holding the key (only from the person's own settings).
    pub api_key_env: Option<String>,
    /// The file it came from, for messages.
    pub source: String,
}

/// What the model asked for. The domain lists are applied to whatever the service returns,
/// whichever service it is; a service that can filter itself is also told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub query: String,
    pub allowed_domains: Vec<String>,
    pub blocked_domains: Vec<String>,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    /// A snippet of the page, when the service gives one.
    pub snippet: String,
    /// How old the page is, as the service says it (`April 30, 2025`, `2 days ago`).
    pub page_age: Option<String>,
}

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchAnswer {
    pub hits: Vec<SearchHit>,
    /// A short answer with its sources, from services that write one.
    pub answer: Option<String>,
}

/// A search service.
#[async_trait]
pub trait SearchBackend: Send + Sync + std::fmt::Debug {
    /// Its name, for results and errors (`searxng`, `anthropic web search`).
    fn name(&self) -> &str;

    /// Run `query`; an error is a sentence for the model. Stops when `cancel` fires.
    async fn search(
        &self,
        query: &SearchQuery,
        cancel: &CancellationToken,
    ) -> Result<SearchAnswer, String>;
}
