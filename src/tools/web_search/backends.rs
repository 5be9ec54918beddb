//! Search services people run or subscribe to, asked over HTTP: SearXNG's JSON API
//! (`/search?q=..&format=json`), Brave Search's web search API, Tavily's search API. Each
//! answer is read into [`SearchAnswer`] with bounded size and time; what the services return
//! is untrusted text.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::session::search::{
    SearchAnswer, SearchBackend, SearchHit, SearchProvider, SearchQuery, WebSearchSetting,
};

/// One search's time limit.
const TIMEOUT: Duration = Duration::from_secs(20);
/// The most of a service's answer that is read.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Results asked of a service (more than shown: the domain lists may drop some).
const ASK_FOR: usize = 20;

const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
const TAVILY_URL: &str = "https://api.tavily.com/search";

/// A configured HTTP search service.
pub struct HttpSearch {
    provider: SearchProvider,
    url: String,
    key: Option<String>,
    client: reqwest::Client,
}

impl std::fmt::Debug for HttpSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("HttpSearch")
            .field("provider", &self.provider)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl HttpSearch {
    /// The service `setting` names, with its key read from the environment `env` gives.
    /// `Err` says what is missing (a key the service needs).
    pub fn new(
        setting: &WebSearchSetting,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<HttpSearch, String> {
        let key = setting
            .api_key_env
            .as_deref()
            .and_then(env)
            .filter(|k| !k.trim().is_empty());
        let url = match (setting.provider, &setting.url) {
            (_, Some(url)) => url.trim_end_matches('/').to_string(),
            (SearchProvider::Brave, None) => BRAVE_URL.into(),
            (SearchProvider::Tavily, None) => TAVILY_URL.into(),
            (SearchProvider::Searxng, None) => {
                return Err(format!(
                    "{}: webSearch needs a url for searxng",
                    setting.source
                ));
            }
        };
        if key.is_none() && setting.provider != SearchProvider::Searxng {
            return Err(format!(
                "{}: webSearch with {} needs a key: set \"apiKeyEnv\" to the name of the \
                 variable that holds it, in your own settings",
                setting.source,
                setting.provider.name()
            ));
        }
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot set up the web search client: {e}"))?;
        Ok(HttpSearch {
            provider: setting.provider,
            url,
            key,
            client,
        })
    }

    fn request(&self, query: &SearchQuery) -> Result<reqwest::RequestBuilder, String> {
        let url = |base: &str, params: &[(&str, &str)]| {
            reqwest::Url::parse_with_params(base, params)
                .map_err(|e| format!("webSearch url {base:?} is not a URL: {e}"))
        };
        Ok(match self.provider {
            SearchProvider::Searxng => self.client.get(url(
                &format!("{}/search", self.url),
                &[("q", query.query.as_str()), ("format", "json")],
            )?),
            SearchProvider::Brave => self
                .client
                .get(url(
                    &self.url,
                    &[("q", query.query.as_str()), ("count", "20")],
                )?)
                .header("Accept", "application/json")
                .header("X-Subscription-Token", self.key.as_deref().unwrap_or("")),
            SearchProvider::Tavily => {
                let mut body = json!({"query": query.query, "max_results": ASK_FOR,
                    "include_answer": true});
                if !query.allowed_domains.is_empty() {
                    body["include_domains"] = json!(query.allowed_domains);
                }
                if !query.blocked_domains.is_empty() {
                    body["exclude_domains"] = json!(query.blocked_domains);
                }
                self.client
                    .post(&self.url)
                    .bearer_auth(self.key.as_deref().unwrap_or(""))
                    .json(&body)
            }
        })
    }
}

/// Read a body of at most [`MAX_BODY_BYTES`].
async fn bounded_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("the answer broke off: {e}"))?
    {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(format!(
                "the answer is larger than {} MiB",
                MAX_BODY_BYTES >> 20
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// The hits in a service's JSON answer.
pub fn parse(provider: SearchProvider, body: &Value) -> SearchAnswer {
    let (list, snippet_key, age_key) = match provider {
        SearchProvider::Searxng => (body.get("results"), "content", "publishedDate"),
        SearchProvider::Brave => (body.pointer("/web/results"), "description", "age"),
        SearchProvider::Tavily => (body.get("results"), "content", "published_date"),
    };
    let hits = list
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let url = text(r, "url");
            (!url.is_empty()).then(|| SearchHit {
                title: text(r, "title"),
                url,
                snippet: text(r, snippet_key),
                page_age: r
                    .get(age_key)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            })
        })
        .take(ASK_FOR)
        .collect();
    let answer = (provider == SearchProvider::Tavily)
        .then(|| text(body, "answer"))
        .filter(|a| !a.trim().is_empty());
    SearchAnswer { hits, answer }
}

#[async_trait]
impl SearchBackend for HttpSearch {
    fn name(&self) -> &str {
        self.provider.name()
    }

    async fn search(
        &self,
        query: &SearchQuery,
        cancel: &CancellationToken,
    ) -> Result<SearchAnswer, String> {
        let name = self.provider.name();
        let sent = async {
            let response = self
                .request(query)?
                .send()
                .await
                .map_err(|e| format!("{name} did not answer: {e}"))?;
            let status = response.status();
            let body = bounded_body(response)
                .await
                .map_err(|e| format!("{name}: {e}"))?;
            if !status.is_success() {
                let head = String::from_utf8_lossy(&body[..body.len().min(300)]).to_string();
                return Err(format!("{name} answered {status}: {}", head.trim()));
            }
            let value: Value = serde_json::from_slice(&body)
                .map_err(|e| format!("{name}'s answer is not JSON: {e}"))?;
            Ok(parse(self.provider, &value))
        };
        tokio::select! {
            r = sent => r,
            _ = cancel.cancelled() => Err("Interrupted by the user.".into()),
        }
    }
}
