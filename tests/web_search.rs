//! WebSearch and WebFetch's reader end to end through the binary (`cairn -p`) against the
//! scripted model server. WebSearch:
//! a SearXNG-shaped JSON service on 127.0.0.1 (for an OpenAI-compatible provider), the
//! Anthropic API's server-side search in a side request, server blocks the model returns in
//! the main conversation kept byte for byte, the domain lists, the permission rule, and the
//! message when no service is configured. WebFetch: the page and the prompt go to the small
//! fast model, whose answer is the result; the cache serves a second prompt; a reader that
//! fails falls back to the page.

#[path = "support/llm.rs"]
mod llm;
#[path = "support/trust.rs"]
mod trust;

use std::sync::{Arc, Mutex};

use cairn::llm::scripted::ScriptedServer;
use serde_json::{Value, json};

/// A SearXNG-shaped service: answers every `/search` with `results`, records the request
/// lines.
async fn searxng(results: Value) -> (u16, Arc<Mutex<Vec<String>>>) {
    let body = json!({"query": "x", "results": results}).to_string();
    serve("application/json", body).await
}

/// A server answering every request with `body` of `content_type`; records the request lines.
async fn serve(content_type: &'static str, body: String) -> (u16, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let (log, body) = (log.clone(), body.clone());
            tokio::spawn(async move {
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let req = String::from_utf8_lossy(&req).to_string();
                log.lock()
                    .unwrap()
                    .push(req.lines().next().unwrap_or("").to_string());
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, seen)
}

/// Run `cairn -p go` in a fresh trusted project with `settings` as the user's settings,
/// against `server` (OpenAI format when `openai`). Returns (exit code, stdout, stderr).
async fn cairn(server: &ScriptedServer, openai: bool, settings: Value) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    trust::trust_folder(home.path(), project.path());
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.current_dir(project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CAIRN_DATA_DIR", home.path().join("data"))
        .env("CAIRN_RETRY_BASE_MS", "10")
        .env("CAIRN_CHECKPOINTS", "off")
        .args(["-p", "go"]);
    if openai {
        cmd.env("OPENAI_BASE_URL", server.openai_base_url())
            .env("OPENAI_API_KEY", "test-key");
    } else {
        cmd.env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key");
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), cmd.output())
        .await
        .expect("cairn finishes")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn search_call(input: Value) -> Value {
    json!({"tool_calls": [{"id": "ws", "name": "WebSearch", "input": input}]})
}

/// The tool result the model got for the call `ws`, from its second request.
fn result_of(server: &ScriptedServer) -> String {
    let requests = server.requests();
    assert!(requests.len() >= 2, "the model was asked again");
    requests[1].body.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searxng_answers_for_an_openai_compatible_provider_with_the_domain_lists_applied() {
    let (port, seen) = searxng(json!([
        {"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/", "content": "Learn Rust"},
        {"title": "Spam", "url": "https://www.spam.test/rust", "content": "buy"},
        {"title": "Blog", "url": "https://blog.example/rust", "content": "a post",
         "publishedDate": "2025-05-01"}
    ]))
    .await;
    let s = llm::scripted(&json!({"turns": [
        search_call(json!({"query": "rust book", "blocked_domains": ["spam.test"]})),
        {"text": "found it"}
    ]}));
    let settings = json!({
        "webSearch": {"provider": "searxng", "url": format!("http://127.0.0.1:{port}")},
        "permissions": {"allow": ["WebSearch"]}
    });
    let (code, stdout, stderr) = cairn(&s, true, settings).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "found it", "-p prints nothing extra");
    let result = result_of(&s);
    assert!(result.contains("(via searxng)"), "{result}");
    assert!(
        result.contains("https://doc.rust-lang.org/book/"),
        "{result}"
    );
    assert!(result.contains("Learn Rust"), "{result}");
    assert!(result.contains("(2025-05-01)"), "{result}");
    assert!(
        !result.contains("spam.test/rust"),
        "blocked domain dropped: {result}"
    );
    assert!(
        result.contains("1 result(s) outside the allowed domains"),
        "{result}"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, vec!["GET /search?q=rust+book&format=json HTTP/1.1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_anthropic_api_searches_in_a_side_request() {
    let server_use = json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
        "input": {"query": "rust 2024 edition"}});
    let server_result = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "title": "Rust 2024", "url":
        "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/", "encrypted_content": "Eq8",
        "page_age": "February 20, 2025"}]});
    let s = llm::scripted(&json!({
        "turns": [
            search_call(json!({"query": "rust 2024 edition", "allowed_domains": ["rust-lang.org"]})),
            {"text": "done"}
        ],
        "by_system": [{"system_contains": "performing a web search tool use", "turns": [
            {"server_blocks": [server_use, server_result],
             "text": "Rust 2024 shipped with 1.85 [1]."}
        ]}]
    }));
    let settings = json!({"permissions": {"allow": ["WebSearch"]}});
    let (code, stdout, stderr) = cairn(&s, false, settings).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "done");
    let requests = s.requests();
    let side = requests
        .iter()
        .find(|r| r.body["system"].to_string().contains("web search tool use"))
        .expect("a side request was made");
    assert_eq!(
        side.body["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 5,
                "allowed_domains": ["rust-lang.org"]}])
    );
    assert!(
        side.body["messages"][0]
            .to_string()
            .contains("rust 2024 edition"),
        "{}",
        side.body
    );
    let main: Vec<_> = requests
        .iter()
        .filter(|r| !r.body["system"].to_string().contains("web search tool use"))
        .collect();
    let result = main[1].body.to_string();
    assert!(
        result.contains("blog.rust-lang.org/2025/02/20/Rust-1.85.0"),
        "{result}"
    );
    assert!(result.contains("(February 20, 2025)"), "{result}");
    assert!(
        result.contains("Rust 2024 shipped with 1.85 [1]."),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_blocks_in_the_main_conversation_go_back_as_received() {
    let server_use = json!({"type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search",
        "input": {"query": "q"}});
    let server_result = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_9",
        "content": [{"type": "web_search_result", "title": "T", "url": "https://t.example/",
        "encrypted_content": "Zz", "page_age": null}]});
    let unknown = json!({"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_8",
        "content": {"stdout": "4"}});
    let s = llm::scripted(&json!({"turns": [
        {"server_blocks": [server_use, server_result, unknown],
         "tool_calls": [{"id": "g", "name": "Glob", "input": {"pattern": "*.md"}}]},
        {"text": "ok"}
    ]}));
    let (code, stdout, stderr) = cairn(&s, false, json!({})).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "ok");
    let second = s.requests()[1].body.clone();
    let assistant = &second["messages"][1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search",
            "input": {"query": "q"}}),
        "{second}"
    );
    let text = second.to_string();
    for block in [
        r#"{"type":"web_search_tool_result","tool_use_id":"srvtoolu_9","content":[{"type":"web_search_result","title":"T","url":"https://t.example/","encrypted_content":"Zz","page_age":null}]}"#,
        r#"{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_8","content":{"stdout":"4"}}"#,
    ] {
        assert!(text.contains(block), "kept byte for byte: {text}");
    }
    assert!(!text.contains("No such tool"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_service_the_model_is_told_how_to_configure_one_and_rules_apply() {
    // OpenAI-compatible provider, no webSearch: the error says how to set one.
    let s = llm::scripted(&json!({"turns": [search_call(json!({"query": "anything"})),
        {"text": "ok"}]}));
    let (code, _, stderr) = cairn(&s, true, json!({"permissions": {"allow": ["WebSearch"]}})).await;
    assert_eq!(code, 0, "{stderr}");
    let result = result_of(&s);
    assert!(
        result.contains("No web search service is configured"),
        "{result}"
    );
    assert!(result.contains("\\\"webSearch\\\""), "{result}");
    // Both lists at once: an input error.
    let s = llm::scripted(&json!({"turns": [search_call(json!({"query": "anything",
        "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]})), {"text": "ok"}]}));
    let (_, _, _) = cairn(&s, true, json!({"permissions": {"allow": ["WebSearch"]}})).await;
    assert!(
        result_of(&s).contains("Give either allowed_domains or blocked_domains, not both."),
        "{}",
        result_of(&s)
    );
    // Headless without an allow rule: the gate refuses it (it would need permission).
    let (port, seen) = searxng(json!([])).await;
    let s = llm::scripted(&json!({"turns": [search_call(json!({"query": "anything"})),
        {"text": "ok"}]}));
    let settings = json!({"webSearch": {"provider": "searxng",
        "url": format!("http://127.0.0.1:{port}")}});
    let (_, _, _) = cairn(&s, true, settings).await;
    let refused = result_of(&s);
    assert!(
        refused.contains("Permission to use WebSearch was denied")
            && refused.contains("--allowedTools \\\"WebSearch\\\""),
        "{refused}"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing was sent to the service"
    );
    // A deny rule takes the tool away.
    let s = llm::scripted(&json!({"turns": [search_call(json!({"query": "anything"})),
        {"text": "ok"}]}));
    let (_, _, _) = cairn(&s, true, json!({"permissions": {"deny": ["WebSearch"]}})).await;
    let first = s.requests()[0].body.to_string();
    assert!(!first.contains("\"WebSearch\""), "denied tool not offered");
}

const PAGE: &str = "<html><head><title>Rust</title></head><body><h1>Rust</h1>\
                    <p>Rust is a systems language.</p><p>Editions: 2015, 2018, 2021, 2024.</p>\
                    </body></html>";

fn fetch_call(id: &str, url: &str, prompt: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "WebFetch",
        "input": {"url": url, "prompt": prompt}}]})
}

fn is_reader(r: &cairn::llm::scripted::RecordedRequest) -> bool {
    r.body["system"]
        .to_string()
        .contains("question about one web page")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_fetch_asks_the_small_model_and_the_cache_serves_a_second_prompt() {
    let (port, seen) = serve("text/html", PAGE.into()).await;
    let url = format!("http://127.0.0.1:{port}/rust");
    let s = llm::scripted(&json!({
        "turns": [
            fetch_call("f1", &url, "Which editions are there?"),
            fetch_call("f2", &url, "What kind of language is it?"),
            {"text": "done"}
        ],
        "by_system": [{"system_contains": "question about one web page", "turns": [
            {"text": "Four: 2015, 2018, 2021 and 2024."}
        ]}]
    }));
    let settings = json!({"permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]}});
    let (code, stdout, stderr) = cairn(&s, false, settings).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "done");
    let requests = s.requests();
    let side: Vec<_> = requests.iter().filter(|r| is_reader(r)).collect();
    assert_eq!(side.len(), 2, "one reader request per prompt");
    // The small model (the haiku alias) got the page as Markdown and the prompt.
    assert_eq!(side[0].body["model"], "claude-haiku-4-5");
    let asked = side[0].body["messages"][0].to_string();
    assert!(asked.contains("Rust is a systems language."), "{asked}");
    assert!(asked.contains("Which editions are there?"), "{asked}");
    assert!(!asked.contains("<p>"), "the page went as Markdown: {asked}");
    let main: Vec<_> = requests.iter().filter(|r| !is_reader(r)).collect();
    let first = main[1].body.to_string();
    assert!(
        first.contains(&format!("Summary of {url} by claude-haiku-4-5")),
        "{first}"
    );
    assert!(
        first.contains("Four: 2015, 2018, 2021 and 2024."),
        "{first}"
    );
    assert!(
        !first.contains("Rust is a systems language."),
        "the page itself stays out of the conversation: {first}"
    );
    // The second prompt went to the reader with the same page.
    let second = side[1].body["messages"][0].to_string();
    assert!(second.contains("What kind of language is it?"), "{second}");
    assert!(second.contains("Rust is a systems language."), "{second}");
    assert!(main[2].body.to_string().contains("Summary of"));
    // The second prompt reused the cached page.
    assert_eq!(seen.lock().unwrap().len(), 1, "{:?}", seen.lock().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_fetch_falls_back_to_the_page_when_the_reader_fails_and_says_so() {
    let (port, _) = serve("text/html", PAGE.into()).await;
    let url = format!("http://127.0.0.1:{port}/rust");
    let s = llm::scripted(&json!({
        "turns": [fetch_call("f1", &url, "editions"), {"text": "done"}],
        "by_system": [{"system_contains": "question about one web page", "turns": [
            {"text": "never", "faults": [{"status": 400, "times": 9}]}
        ]}]
    }));
    let settings = json!({"permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]}});
    let (code, _, stderr) = cairn(&s, false, settings).await;
    assert_eq!(code, 0, "{stderr}");
    let result = s
        .requests()
        .into_iter()
        .filter(|r| !is_reader(r))
        .nth(1)
        .expect("a second main request")
        .body
        .to_string();
    assert!(
        result.contains("The page could not be summarised ("),
        "{result}"
    );
    assert!(
        result.contains("Editions: 2015, 2018, 2021, 2024."),
        "{result}"
    );
}
