use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "HOME_URL" => Some("http://127.0.0.1:9".into()),
        "TOKEN" => Some("t0k".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

#[test]
fn expansion_takes_values_defaults_and_names_missing_variables() {
    assert_eq!(
        expand("${HOME_URL}/mcp", &env).unwrap(),
        "http://127.0.0.1:9/mcp"
    );
    assert_eq!(expand("${NOPE:-x}-${TOKEN}", &env).unwrap(), "x-t0k");
    assert_eq!(expand("${EMPTY:-d}", &env).unwrap(), "d");
    assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
    assert_eq!(expand("cost $5 ${NOPE:-}", &env).unwrap(), "cost $5 ");
    let err = expand("Bearer ${API_KEY}", &env).unwrap_err();
    assert!(err.contains("API_KEY"), "{err}");
    assert!(expand("${OPEN", &env).unwrap_err().contains("unclosed"));
}

#[test]
fn servers_parse_with_stdio_as_the_default_type() {
    let doc = serde_json::json!({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "${PKG:-server-fs}"], "env": {"K": "${TOKEN}"}},
        "remote": {"type": "http", "url": "${HOME_URL}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "old": {"type": "sse", "url": "https://example.com/sse"},
        "bad": {"type": "ftp", "url": "x"},
        "nokey": {"type": "http", "url": "${MISSING}/x"},
        "neither": {"args": []},
        "badargs": {"command": "x", "args": [1]},
    }});
    let mut problems = Vec::new();
    let servers = servers_of(&doc, Scope::Project, ".mcp.json", &env, &mut problems);
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fs", "remote", "old"]);
    assert_eq!(
        servers[0].transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server-fs".into()],
            env: vec![("K".into(), "t0k".into())],
        }
    );
    assert_eq!(
        servers[1].transport,
        Transport::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer t0k".into())],
        }
    );
    assert_eq!(servers[2].transport.kind(), "sse");
    assert_eq!(problems.len(), 4, "{problems:#?}");
    for (name, words) in [
        ("bad", "unknown \"type\""),
        ("nokey", "MISSING"),
        ("neither", "\"command\""),
        ("badargs", "\"args\""),
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(".mcp.json: server \"")
                    && p.contains(name)
                    && p.contains(words)),
            "{name}: {problems:#?}"
        );
    }
}

#[test]
fn approval_rules_disabled_wins_then_all_then_listed() {
    let a = Approval {
        enable_all: false,
        enabled: vec!["a".into()],
        disabled: vec![],
        blocked: None,
    };
    assert!(a.approves("a"));
    assert!(!a.approves("b"));
    let all = Approval {
        enable_all: true,
        enabled: vec![],
        disabled: vec!["b".into()],
        blocked: None,
    };
    assert!(all.approves("a"));
    assert!(!all.approves("b"));
    let both = Approval {
        enable_all: false,
        enabled: vec!["b".into()],
        disabled: vec!["b".into()],
        blocked: None,
    };
    assert!(!both.approves("b"));
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn scopes_merge_local_over_project_over_user_and_project_needs_approval() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir(&project).unwrap();
    let claude_json = dir.path().join(".claude.json");
    let key = project.to_string_lossy().to_string();
    write(
        &claude_json,
        &serde_json::json!({
            "mcpServers": {"shared": {"command": "user-cmd"}, "mine": {"command": "mine"}},
            "projects": {key: {"mcpServers": {"shared": {"command": "local-cmd"}}}},
        })
        .to_string(),
    );
    write(
        &project.join(".mcp.json"),
        r#"{"mcpServers": {"shared": {"command": "project-cmd"}, "proj": {"command": "p"},
            "waiting": {"command": "w"}, "off": {"command": "o"}}}"#,
    );
    let sources = Sources {
        project_dir: project.clone(),
        claude_json: Some(claude_json.clone()),
        cli: vec![],
        strict: false,
    };
    let approval = Approval {
        enable_all: false,
        enabled: vec!["proj".into(), "shared".into(), "off".into()],
        disabled: vec!["off".into()],
        blocked: None,
    };
    let cfg = load(&sources, &approval, &env);
    assert!(cfg.problems.is_empty(), "{:?}", cfg.problems);
    let got: Vec<(&str, Scope)> = cfg
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.scope))
        .collect();
    assert_eq!(
        got,
        [
            ("mine", Scope::User),
            ("proj", Scope::Project),
            ("shared", Scope::Local)
        ]
    );
    let Transport::Stdio { command, .. } = &cfg.servers[2].transport else {
        panic!("stdio expected");
    };
    assert_eq!(command, "local-cmd");
    let waiting: Vec<&str> = cfg.unapproved.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(waiting, ["waiting"]);
    assert_eq!(names(&cfg.disabled), ["off"]);

    // --mcp-config (file and inline JSON) wins; --strict-mcp-config keeps only those.
    let file = dir.path().join("extra.json");
    write(
        &file,
        r#"{"mcpServers": {"mine": {"command": "from-file"}}}"#,
    );
    let strict = Sources {
        cli: vec![
            file.to_string_lossy().into(),
            r#"{"mcpServers": {"inline": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}"#
                .into(),
            "{not json".into(),
            dir.path().join("missing.json").to_string_lossy().into(),
        ],
        strict: true,
        ..sources
    };
    let cfg = load(&strict, &approval, &env);
    let got: Vec<(&str, Scope)> = cfg
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.scope))
        .collect();
    assert_eq!(got, [("inline", Scope::Cli), ("mine", Scope::Cli)]);
    assert_eq!(cfg.problems.len(), 2, "{:?}", cfg.problems);
    assert!(cfg.problems[0].starts_with("--mcp-config (inline JSON): not valid JSON"));
    assert!(cfg.problems[1].contains("missing.json: cannot read"));
}

#[test]
fn a_broken_file_is_a_problem_line_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join(".mcp.json"), "{\"mcpServers\": [1, 2]}");
    let sources = Sources {
        project_dir: dir.path().to_path_buf(),
        claude_json: None,
        cli: vec![],
        strict: false,
    };
    let cfg = load(&sources, &Approval::default(), &env);
    assert!(cfg.servers.is_empty());
    assert_eq!(cfg.problems.len(), 1);
    assert!(
        cfg.problems[0].ends_with("\"mcpServers\" must be an object"),
        "{:?}",
        cfg.problems
    );
    write(&dir.path().join(".mcp.json"), "{ nope");
    let cfg = load(&sources, &Approval::default(), &env);
    assert!(
        cfg.problems[0].contains("not valid JSON"),
        "{:?}",
        cfg.problems
    );
}

fn project_sources(dir: &Path) -> Sources {
    Sources {
        project_dir: dir.to_path_buf(),
        claude_json: None,
        cli: vec![],
        strict: false,
    }
}

fn all_approved() -> Approval {
    Approval {
        enable_all: true,
        ..Approval::default()
    }
}

#[test]
fn ambiguous_and_clashing_server_names_are_refused_and_named() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"safe": {"command": "s"}, "safe__evil": {"command": "e"},
            "a.b": {"command": "x"}, "ok_": {"command": "t"}}}"#,
    );
    let inline = r#"{"mcpServers": {"a_b": {"command": "y"}}}"#;
    let sources = Sources {
        cli: vec![inline.into()],
        ..project_sources(dir.path())
    };
    let cfg = load(&sources, &all_approved(), &env);
    let names: Vec<&str> = cfg.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["safe"]);
    let problems = cfg.problems.join("\n");
    assert!(
        problems.contains("server \"safe__evil\": the name contains \"__\", which makes its tools' names mcp__<server>__<tool> ambiguous"),
        "{problems}"
    );
    assert!(
        problems.contains("server \"ok_\": the name ends with \"_\""),
        "{problems}"
    );
    assert!(
        problems.contains("servers \"a.b\" (")
            && problems.contains(
                "and \"a_b\" (--mcp-config (inline JSON)) all become mcp__a_b__<tool> in tool names"
            ),
        "{problems}"
    );
    // A waiting project server that clashes is not offered for approval either.
    let cfg = load(&sources, &Approval::default(), &env);
    assert!(
        cfg.servers.iter().all(|s| s.name != "a_b"),
        "{:?}",
        cfg.servers
    );
    assert!(
        cfg.unapproved.iter().all(|s| s.name != "a.b"),
        "{:?}",
        cfg.unapproved
    );
}

#[test]
fn a_file_over_the_size_limit_is_reported_and_skipped_unread() {
    let dir = tempfile::tempdir().unwrap();
    // Valid JSON, over 1 MiB: refused whole, without being parsed.
    let filler = "x".repeat(MAX_CONFIG_BYTES as usize);
    write(
        &dir.path().join(".mcp.json"),
        &format!(r#"{{"mcpServers": {{"s": {{"command": "s"}}}}, "pad": "{filler}"}}"#),
    );
    let cfg = load(&project_sources(dir.path()), &all_approved(), &env);
    assert!(cfg.servers.is_empty());
    assert_eq!(cfg.problems.len(), 1, "{:?}", cfg.problems);
    assert!(
        cfg.problems[0].ends_with(
            ".mcp.json: larger than 1024 KiB, the most cairn reads of an MCP configuration; \
             skipped (no server from it starts)"
        ),
        "{:?}",
        cfg.problems
    );
    // The same for --mcp-config, inline or a file; and a FIFO is not waited on.
    let big = dir.path().join("big.json");
    std::fs::copy(dir.path().join(".mcp.json"), &big).unwrap();
    let fifo = dir.path().join("fifo.json");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let sources = Sources {
        cli: vec![
            std::fs::read_to_string(&big).unwrap(),
            big.display().to_string(),
            fifo.display().to_string(),
        ],
        strict: true,
        ..project_sources(dir.path())
    };
    let cfg = load(&sources, &all_approved(), &env);
    assert!(cfg.servers.is_empty());
    assert_eq!(cfg.problems.len(), 3, "{:?}", cfg.problems);
    assert!(cfg.problems[0].starts_with("--mcp-config (inline JSON): larger than 1024 KiB"));
    assert!(cfg.problems[1].contains("big.json: larger than 1024 KiB"));
    assert!(cfg.problems[2].ends_with("fifo.json: cannot read: not a regular file"));
}

#[test]
fn servers_past_the_cap_of_one_file_are_reported_and_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let servers: Map<String, Value> = (0..MAX_SERVERS_PER_FILE + 50)
        .map(|i| (format!("s{i:04}"), serde_json::json!({"command": "c"})))
        .collect();
    write(
        &dir.path().join(".mcp.json"),
        &serde_json::json!({ "mcpServers": servers }).to_string(),
    );
    let cfg = load(&project_sources(dir.path()), &all_approved(), &env);
    assert_eq!(cfg.servers.len(), MAX_SERVERS_PER_FILE);
    assert_eq!(cfg.servers.last().unwrap().name, "s0099");
    assert_eq!(cfg.problems.len(), 1, "{:?}", cfg.problems);
    assert!(
        cfg.problems[0].ends_with(
            ".mcp.json: 150 servers, more than the 100 cairn takes from one file; the first \
             100 (in file order) are read, the other 50 are not started"
        ),
        "{:?}",
        cfg.problems
    );
}

#[test]
fn an_unreadable_refusal_list_starts_no_project_server() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}"#,
    );
    let approval = Approval {
        enable_all: true,
        enabled: vec!["a".into()],
        disabled: vec![],
        blocked: Some("settings.json:3: `disabledMcpjsonServers` must be a list".into()),
    };
    assert!(!approval.approves("a"));
    let cfg = load(&project_sources(dir.path()), &approval, &env);
    assert!(cfg.servers.is_empty() && cfg.unapproved.is_empty());
    assert_eq!(names(&cfg.disabled), ["a", "b"]);
    assert!(
        cfg.problems[0].ends_with(
            ".mcp.json: no server of this file is started, because the settings' list of \
             refused servers could not be read (settings.json:3: `disabledMcpjsonServers` \
             must be a list)"
        ),
        "{:?}",
        cfg.problems
    );
}

fn names(servers: &[ServerConfig]) -> Vec<&str> {
    servers.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn user_and_local_servers_turned_off_in_the_project_stay_off() {
    let dir = tempfile::tempdir().unwrap();
    let claude_json = dir.path().join(".claude.json");
    let project = dir.path().join("p");
    let key = project.display().to_string();
    write(
        &claude_json,
        &serde_json::json!({
            "numStartups": 4,
            "mcpServers": {"u": {"command": "u"}, "v": {"command": "v"}},
            "projects": {key.clone(): {"mcpServers": {"l": {"command": "l"}}}}
        })
        .to_string(),
    );
    let sources = Sources {
        project_dir: project.clone(),
        claude_json: Some(claude_json.clone()),
        ..Sources::default()
    };
    super::super::edit::set_disabled(&claude_json, &project, "u", true).unwrap();
    super::super::edit::set_disabled(&claude_json, &project, "l", true).unwrap();
    let cfg = load(&sources, &all_approved(), &env);
    assert_eq!(names(&cfg.servers), ["v"]);
    assert_eq!(names(&cfg.disabled), ["l", "u"]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
    assert_eq!(
        doc["projects"][&key]["disabledMcpServers"],
        serde_json::json!(["u", "l"])
    );
    assert_eq!(doc["numStartups"], 4);
    // Another project is not affected; turning one on again takes it from the list.
    let other = Sources {
        project_dir: dir.path().join("q"),
        ..sources.clone()
    };
    assert_eq!(
        names(&load(&other, &all_approved(), &env).servers),
        ["u", "v"]
    );
    super::super::edit::set_disabled(&claude_json, &project, "u", false).unwrap();
    assert_eq!(
        names(&load(&sources, &all_approved(), &env).servers),
        ["u", "v"]
    );
}
