//! How a request says who sends it, as Claude Code does: an API key (`x-api-key` for Anthropic,
//! `Authorization: Bearer` for OpenAI-compatible servers), a login token
//! (`ANTHROPIC_AUTH_TOKEN`, sent as `Authorization: Bearer`), or `apiKeyHelper`, a shell command
//! whose standard output is the key (sent both ways; `ANTHROPIC_API_KEY` wins for
//! `x-api-key`, as in Claude Code). Plus custom headers (`ANTHROPIC_CUSTOM_HEADERS`, and
//! `OPENAI_CUSTOM_HEADERS` for OpenAI-compatible servers).
//!
//! The helper's answer is kept for its time to live (`CLAUDE_CODE_API_KEY_HELPER_TTL_MS`,
//! default five minutes) and asked again sooner when the server refuses it: a 401 runs the
//! helper once more and sends the request again, once. One helper runs at a time, however many
//! requests wait for it. A helper that fails, hangs or prints nothing is an error that says so;
//! its output is never logged or shown.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use reqwest::RequestBuilder;
use tokio::sync::Mutex;

use super::{LlmError, Provider};

/// The environment variable setting how long a helper's key is used before asking again.
pub const HELPER_TTL_ENV: &str = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS";
/// Claude Code's default time to live of a helper's key.
pub const DEFAULT_HELPER_TTL: Duration = Duration::from_secs(5 * 60);
/// How long a helper may take before it counts as failed.
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);

/// The `apiKeyHelper` setting: a command run with `sh -c` in `cwd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHelper {
    pub command: String,
    pub cwd: PathBuf,
    pub ttl: Duration,
}

/// Everything besides an API key that identifies the sender.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Login {
    /// `ANTHROPIC_AUTH_TOKEN`: sent as `Authorization: Bearer`.
    pub auth_token: Option<String>,
    pub key_helper: Option<KeyHelper>,
    /// `ANTHROPIC_CUSTOM_HEADERS` (or `OPENAI_CUSTOM_HEADERS`), parsed.
    pub headers: Vec<(String, String)>,
}

/// Custom headers from the variable `var`: one `Name: Value` per line. Lines that are not a
/// valid header are returned as problems (without their value, which may be a secret).
pub fn parse_custom_headers(var: &str, text: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut headers = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let parsed = line.split_once(':').and_then(|(name, value)| {
            let (name, value) = (name.trim(), value.trim());
            let valid = reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok()
                && reqwest::header::HeaderValue::from_str(value).is_ok();
            valid.then(|| (name.to_string(), value.to_string()))
        });
        match parsed {
            Some(h) => headers.push(h),
            None => problems.push(format!("{var} line {}: not `Name: Value`; ignored", n + 1)),
        }
    }
    (headers, problems)
}

/// The sender's identity for one client: fixed parts and the helper's cached key.
pub struct Auth {
    provider: Provider,
    api_key: Option<String>,
    login: Login,
    cached: Mutex<Option<(String, Instant)>>,
}

impl Auth {
    pub fn new(provider: Provider, api_key: Option<String>, login: Login) -> Auth {
        Auth {
            provider,
            api_key,
            login,
            cached: Mutex::new(None),
        }
    }

    /// Send a request built by `build` with the identity headers; when a helper's key is
    /// refused (401), run the helper again and send once more.
    pub async fn send(
        &self,
        build: impl Fn() -> RequestBuilder,
        body: String,
        idle: Duration,
    ) -> Result<reqwest::Response, LlmError> {
        let first = self.apply(build(), false).await?;
        // A retry after a refused key sends the same body again.
        let again_body = self.login.key_helper.is_some().then(|| body.clone());
        match super::http::post_json(first, body, idle).await {
            Err(LlmError::Http { status: 401, .. }) if let Some(body) = again_body => {
                tracing::info!("the API key from apiKeyHelper was refused; asking it again");
                let again = self.apply(build(), true).await?;
                super::http::post_json(again, body, idle).await
            }
            other => other,
        }
    }

    async fn apply(
        &self,
        mut builder: RequestBuilder,
        fresh: bool,
    ) -> Result<RequestBuilder, LlmError> {
        let helper_key = match &self.login.key_helper {
            Some(helper) => Some(self.helper_key(helper, fresh).await?),
            None => None,
        };
        let bearer = self.login.auth_token.as_ref().or(helper_key.as_ref());
        let key = match self.provider {
            // ANTHROPIC_API_KEY wins over the helper, as in Claude Code.
            Provider::Anthropic => self.api_key.as_ref().or(helper_key.as_ref()),
            // OpenAI-compatible servers take the key as a bearer token.
            Provider::OpenAi => None,
        };
        if let Some(key) = key {
            builder = builder.header("x-api-key", key);
        }
        let bearer = match self.provider {
            Provider::Anthropic => bearer,
            Provider::OpenAi => bearer.or(self.api_key.as_ref()),
        };
        if let Some(token) = bearer {
            builder = builder.bearer_auth(token);
        }
        for (name, value) in &self.login.headers {
            builder = builder.header(name, value);
        }
        Ok(builder)
    }

    /// The helper's key: the cached one while it is younger than the TTL (and not `fresh`),
    /// else a new one.
    async fn helper_key(&self, helper: &KeyHelper, fresh: bool) -> Result<String, LlmError> {
        let mut cached = self.cached.lock().await;
        if let Some((key, at)) = cached.as_ref()
            && !fresh
            && at.elapsed() < helper.ttl
        {
            return Ok(key.clone());
        }
        let key = run_helper(helper).await?;
        *cached = Some((key.clone(), Instant::now()));
        Ok(key)
    }
}

/// Run the helper; its trimmed standard output is the key.
async fn run_helper(helper: &KeyHelper) -> Result<String, LlmError> {
    let failed = |why: String| LlmError::Auth(format!("apiKeyHelper `{}` {why}", helper.command));
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&helper.command)
        .current_dir(&helper.cwd)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(HELPER_TIMEOUT, command.output()).await {
        Err(_) => {
            return Err(failed(format!(
                "took more than {} s",
                HELPER_TIMEOUT.as_secs()
            )));
        }
        Ok(Err(e)) => return Err(failed(format!("could not start: {e}"))),
        Ok(Ok(o)) => o,
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().next().unwrap_or("").trim();
        return Err(failed(format!("failed ({}): {first}", output.status)));
    }
    let key = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if key.is_empty() {
        return Err(failed("printed nothing".into()));
    }
    if reqwest::header::HeaderValue::from_str(&key).is_err() {
        return Err(failed(
            "printed something that cannot be sent as a header".into(),
        ));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_headers_are_parsed_and_bad_lines_named_without_values() {
        let (headers, problems) = parse_custom_headers(
            "ANTHROPIC_CUSTOM_HEADERS",
            "X-Team: core\n\n  X-Trace :  a b \nnot a header\nBad Name: v\n",
        );
        assert_eq!(
            headers,
            [
                ("X-Team".to_string(), "core".to_string()),
                ("X-Trace".to_string(), "a b".to_string())
            ]
        );
        assert_eq!(
            problems,
            [
                "ANTHROPIC_CUSTOM_HEADERS line 4: not `Name: Value`; ignored",
                "ANTHROPIC_CUSTOM_HEADERS line 5: not `Name: Value`; ignored"
            ]
        );
    }

    fn helper(command: &str, dir: &std::path::Path) -> KeyHelper {
        KeyHelper {
            command: command.into(),
            cwd: dir.to_path_buf(),
            ttl: DEFAULT_HELPER_TTL,
        }
    }

    #[tokio::test]
    async fn a_helper_key_is_cached_until_asked_fresh() {
        let tmp = tempfile::tempdir().unwrap();
        // Each run prints a new key: key-1, key-2, ...
        let cmd = "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo key-$n";
        let auth = Auth::new(
            Provider::Anthropic,
            None,
            Login {
                key_helper: Some(helper(cmd, tmp.path())),
                ..Login::default()
            },
        );
        let h = auth.login.key_helper.clone().unwrap();
        assert_eq!(auth.helper_key(&h, false).await.unwrap(), "key-1");
        assert_eq!(auth.helper_key(&h, false).await.unwrap(), "key-1");
        assert_eq!(auth.helper_key(&h, true).await.unwrap(), "key-2");
        let expired = KeyHelper {
            ttl: Duration::ZERO,
            ..h
        };
        assert_eq!(auth.helper_key(&expired, false).await.unwrap(), "key-3");
    }

    #[tokio::test]
    async fn a_failing_or_silent_helper_says_what_went_wrong() {
        let tmp = tempfile::tempdir().unwrap();
        let err = run_helper(&helper("echo nope >&2; exit 3", tmp.path()))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("apiKeyHelper `echo nope >&2; exit 3` failed"),
            "{err}"
        );
        assert!(err.contains("nope"), "{err}");
        let err = run_helper(&helper("true", tmp.path())).await.unwrap_err();
        assert!(err.to_string().ends_with("printed nothing"), "{err}");
    }
}
