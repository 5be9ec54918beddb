//! `/rewind` with the real core against the scripted model, in a directory that is not a git
//! repository: the files changed by Edit, Write, `rm`, `sed -i`, `echo >>` and a new file all
//! go back; conversation only and code only; a file changed outside cairn since its last turn
//! needs a confirmation; a rewind is undone; a session resumed later (as `-p` sessions are)
//! can still rewind what it did.
//!
//! The scripted model answers turn N to a request holding N assistant messages.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use cairn::llm::{Provider, Role};
use cairn::protocol::{Event, Op, RewindPoint, RewindTarget};
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/checkpoint_file.rs"]
mod tampering;

use agent::{Agent, Setup};

/// Collect events until one matches `stop`.
async fn until(agent: &mut Agent, stop: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), agent.handle.events.recv())
            .await
            .expect("no event in time")
            .expect("the core stopped");
        let done = stop(&ev);
        seen.push(ev);
        if done {
            return seen;
        }
    }
}

/// Every file under `dir` but the session's data, with its content.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".data" {
            continue;
        }
        out.insert(name, std::fs::read_to_string(entry.path()).unwrap());
    }
    out
}

async fn list_points(agent: &mut Agent) -> (Vec<RewindPoint>, Option<String>) {
    agent.handle.ops.send(Op::RewindList).unwrap();
    let events = until(agent, |e| matches!(e, Event::RewindPoints { .. })).await;
    match events.last() {
        Some(Event::RewindPoints { points, undo }) => (points.clone(), undo.clone()),
        _ => unreachable!(),
    }
}

/// Send a rewind and return the event that answers it (Rewound, a confirmation or an error).
async fn rewind(
    agent: &mut Agent,
    target: RewindTarget,
    code: bool,
    conv: bool,
    ok: bool,
) -> Event {
    agent
        .handle
        .ops
        .send(Op::Rewind {
            target,
            code,
            conversation: conv,
            confirmed: ok,
        })
        .unwrap();
    let events = until(agent, |e| {
        matches!(
            e,
            Event::Rewound { .. } | Event::RewindNeedsConfirmation { .. } | Event::Error { .. }
        )
    })
    .await;
    events.last().cloned().unwrap()
}

fn project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("a.txt", "one\n"),
        ("b.txt", "bee\n"),
        ("c.txt", "sea\n"),
        ("d.txt", "dee\n"),
        ("e.txt", "e\n"),
    ] {
        std::fs::write(tmp.path().join(name), text).unwrap();
    }
    tmp
}

/// One prompt whose turn changes every file in a different way.
fn changing_script() -> Value {
    json!({"turns": [
        {"tool_calls": [
            {"id": "r1", "name": "Read", "input": {"file_path": "a.txt"}},
            {"id": "r2", "name": "Read", "input": {"file_path": "e.txt"}}
        ]},
        {"tool_calls": [
            {"id": "e1", "name": "Edit",
             "input": {"file_path": "a.txt", "old_string": "one", "new_string": "ONE"}},
            {"id": "w1", "name": "Write", "input": {"file_path": "e.txt", "content": "E!\n"}},
            {"id": "w2", "name": "Write", "input": {"file_path": "new.txt", "content": "new\n"}},
            {"id": "b1", "name": "Bash", "input": {"command":
                "rm b.txt && sed -i 's/sea/SEA/' c.txt && echo more >> d.txt"}}
        ]},
        {"text": "All done."}
    ]})
}

fn changed_tree() -> BTreeMap<String, String> {
    [
        ("a.txt", "ONE\n"),
        ("c.txt", "SEA\n"),
        ("d.txt", "dee\nmore\n"),
        ("e.txt", "E!\n"),
        ("new.txt", "new\n"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

#[tokio::test]
async fn code_rewind_undoes_edit_write_rm_sed_append_and_new_files_without_git() {
    let tmp = project();
    let before = tree(tmp.path());
    assert!(!tmp.path().join(".git").exists());
    let mut agent = Agent::start(
        &changing_script(),
        Setup::in_dir(tmp.path(), Provider::Anthropic),
    );
    agent.prompt("change everything").await;
    assert_eq!(tree(tmp.path()), changed_tree());

    let (points, undo) = list_points(&mut agent).await;
    assert_eq!(undo, None);
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].text, "change everything");
    assert!(points[0].code && points[0].conversation);

    let target = RewindTarget::Prompt {
        id: points[0].id.clone(),
    };
    let done = rewind(&mut agent, target, true, false, false).await;
    let Event::Rewound { summary, prompt } = done else {
        panic!("{done:?}")
    };
    assert_eq!(tree(tmp.path()), before, "{summary}");
    assert_eq!(prompt, None, "code only: the composer keeps what it has");
    assert!(summary.contains("removed"), "{summary}");
    // The summary names the files it put back.
    assert!(summary.contains("1 removed (new.txt)"), "{summary}");
    assert!(summary.contains("a.txt"), "{summary}");
    // The transcript under the project (its data dir) was not rewound with the files.
    let transcript = std::fs::read_to_string(tmp.path().join(".data/t.jsonl")).unwrap();
    assert!(transcript.contains("All done."));

    // The model hears which files went back.
    agent.prompt("and now?").await;
    let body = agent.request_body(3).to_string();
    assert!(body.contains("rewound the files"), "{body}");
    assert!(body.contains("new.txt"), "{body}");
}

#[tokio::test]
async fn conversation_only_rewind_keeps_the_files_and_a_resume_sees_it() {
    let tmp = project();
    let script = json!({"turns": [
        {"text": "first answer"},
        {"tool_calls": [{"id": "w", "name": "Write",
                         "input": {"file_path": "new.txt", "content": "x\n"}}]},
        {"text": "second answer"}
    ]});
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.prompt("one").await;
    agent.prompt("two").await;
    let (points, _) = list_points(&mut agent).await;
    let texts: Vec<&str> = points.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["two", "one"], "newest first");

    let target = RewindTarget::Prompt {
        id: points[0].id.clone(),
    };
    agent
        .handle
        .ops
        .send(Op::Rewind {
            target,
            code: false,
            conversation: true,
            confirmed: false,
        })
        .unwrap();
    let events = until(&mut agent, |e| matches!(e, Event::Rewound { .. })).await;
    let history = events.iter().find_map(|e| match e {
        Event::HistoryRestored { items } => Some(items.len()),
        _ => None,
    });
    assert_eq!(history, Some(2), "{events:?}");
    let Some(Event::Rewound { prompt, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(
        prompt.as_deref(),
        Some("two"),
        "the prompt goes back to the composer"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("new.txt")).unwrap(),
        "x\n",
        "conversation only: the files stay"
    );

    agent.prompt("three").await;
    let requests = agent.server.requests();
    let last = &requests.last().unwrap().body;
    let texts: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    let all = texts.join("\n");
    assert!(all.contains("one") && all.contains("first answer"), "{all}");
    assert!(all.contains("three"), "{all}");
    assert!(
        !all.contains("\"two\""),
        "the rewound prompt is gone: {all}"
    );
    assert!(
        all.contains("files\\nwere not") || all.contains("were not"),
        "{all}"
    );

    // A resume reads the rewound conversation from the transcript.
    let resumed = cairn::session::resume::load(&tmp.path().join(".data/t.jsonl")).unwrap();
    let prompts: Vec<String> = resumed
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .filter_map(cairn::session::resume::prompt_text)
        .collect();
    assert_eq!(prompts, ["one", "three"]);
    // And the rewind points of the resumed transcript are those of the conversation now.
    let bytes = std::fs::read(tmp.path().join(".data/t.jsonl")).unwrap();
    let seg = cairn::session::rewind::segment(&bytes);
    let ids: Vec<&str> = seg.prompts.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(ids, ["one", "three"]);
    // The session picker counts the prompts of the conversation as it is now.
    let listed = cairn::session::resume::list(&tmp.path().join(".data"));
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].prompts, 2);
    assert_eq!(listed[0].first_prompt, "one");
}

#[tokio::test]
async fn a_file_changed_outside_cairn_is_listed_and_restored_only_when_confirmed() {
    let tmp = project();
    let mut agent = Agent::start(
        &changing_script(),
        Setup::in_dir(tmp.path(), Provider::Anthropic),
    );
    let before = tree(tmp.path());
    agent.prompt("change everything").await;
    // The person edits a file after the turn.
    std::fs::write(tmp.path().join("c.txt"), "mine\n").unwrap();
    let (points, _) = list_points(&mut agent).await;
    let target = RewindTarget::Prompt {
        id: points[0].id.clone(),
    };
    let asked = rewind(&mut agent, target.clone(), true, true, false).await;
    let Event::RewindNeedsConfirmation {
        files,
        code,
        conversation,
        ..
    } = asked
    else {
        panic!("{asked:?}")
    };
    assert!(code && conversation);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["c.txt"], "only the file changed outside the turn");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("c.txt")).unwrap(),
        "mine\n",
        "nothing is touched before the confirmation"
    );
    assert!(tmp.path().join("new.txt").exists());

    let done = rewind(&mut agent, target, true, true, true).await;
    assert!(matches!(done, Event::Rewound { .. }), "{done:?}");
    assert_eq!(tree(tmp.path()), before);
}

#[tokio::test]
async fn a_rewind_is_undone_files_and_conversation() {
    let tmp = project();
    let mut agent = Agent::start(
        &changing_script(),
        Setup::in_dir(tmp.path(), Provider::Anthropic),
    );
    let before = tree(tmp.path());
    agent.prompt("change everything").await;
    let (points, _) = list_points(&mut agent).await;
    let target = RewindTarget::Prompt {
        id: points[0].id.clone(),
    };
    let done = rewind(&mut agent, target, true, true, false).await;
    assert!(matches!(done, Event::Rewound { .. }), "{done:?}");
    assert_eq!(tree(tmp.path()), before);

    let (points, undo) = list_points(&mut agent).await;
    assert!(
        points.is_empty(),
        "the conversation is before its only prompt"
    );
    assert!(
        undo.as_deref()
            .is_some_and(|u| u.contains("change everything")),
        "{undo:?}"
    );
    let done = rewind(&mut agent, RewindTarget::UndoLast, true, true, false).await;
    let Event::Rewound { summary, .. } = &done else {
        panic!("{done:?}")
    };
    assert!(summary.starts_with("Undid"), "{summary}");
    assert_eq!(tree(tmp.path()), changed_tree());
    let (points, undo) = list_points(&mut agent).await;
    assert_eq!(points.len(), 1, "the conversation is back");
    assert!(undo.is_some(), "the undo can itself be undone");
    // The undo of the undo is a rewind again.
    let done = rewind(&mut agent, RewindTarget::UndoLast, true, true, false).await;
    assert!(matches!(done, Event::Rewound { .. }), "{done:?}");
    assert_eq!(tree(tmp.path()), before);
}

/// One session in `dir` runs the changing prompt and ends.
async fn change_everything_and_quit(dir: &Path) {
    let mut first = Agent::start(&changing_script(), Setup::in_dir(dir, Provider::Anthropic));
    first.prompt("change everything").await;
    first.handle.ops.send(Op::Shutdown).unwrap();
    // The core finishes (its checkpoints written) and closes its events.
    while first.handle.events.recv().await.is_some() {}
}

/// A new process resuming the session in `dir` (as `--resume` does).
fn resume(dir: &Path) -> Agent {
    let transcript = dir.join(".data/t.jsonl");
    let mut setup = Setup::in_dir(dir, Provider::Anthropic);
    setup.resume = Some(cairn::session::resume::load(&transcript).unwrap());
    Agent::start(&json!({"turns": [{"text": "hi"}]}), setup)
}

#[tokio::test]
async fn a_session_resumed_later_rewinds_what_it_did_before() {
    let tmp = project();
    let before = tree(tmp.path());
    change_everything_and_quit(tmp.path()).await;
    let mut second = resume(tmp.path());
    let (points, _) = list_points(&mut second).await;
    assert_eq!(points.len(), 1);
    assert!(
        points[0].code,
        "the checkpoint of the first process is found"
    );
    let target = RewindTarget::Prompt {
        id: points[0].id.clone(),
    };
    let done = rewind(&mut second, target, true, false, false).await;
    assert!(matches!(done, Event::Rewound { .. }), "{done:?}");
    assert_eq!(tree(tmp.path()), before);
}

#[tokio::test]
async fn rewinding_is_refused_while_the_model_works() {
    let tmp = project();
    let script = json!({"turns": [{"text": "slow answer", "delay_ms": 200}]});
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.submit("go");
    agent.handle.ops.send(Op::RewindList).unwrap();
    let events = agent.run_turn().await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Notice { message } if message.contains("Cannot rewind"))),
        "{events:?}"
    );
}

/// Issue 29: a checkpoint rewritten to cover a directory outside the project (its digest
/// recomputed) is refused after a resume, and nothing there or in the project is touched.
#[tokio::test]
async fn a_resumed_session_refuses_a_checkpoint_whose_roots_were_changed() {
    let tmp = project();
    let outside = tempfile::tempdir().unwrap();
    let outside_dir = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::write(outside_dir.join("mine.txt"), "keep\n").unwrap();
    change_everything_and_quit(tmp.path()).await;
    let store = tmp.path().join(".data/rewind");
    let root = outside_dir.as_os_str().as_encoded_bytes().to_vec();
    for entry in std::fs::read_dir(store.join("checkpoints")).unwrap() {
        let path = entry.unwrap().path();
        let mut cp = tampering::CpFile::read(&path);
        cp.roots = vec![root.clone()];
        cp.write(&path);
    }
    let project_before = tree(tmp.path());

    let mut second = resume(tmp.path());
    let (points, _) = list_points(&mut second).await;
    let target = RewindTarget::Prompt {
        id: points[0].id.clone(),
    };
    let answer = rewind(&mut second, target, true, false, true).await;
    let Event::Error { message } = answer else {
        panic!("{answer:?}")
    };
    assert!(
        message.starts_with("Cannot rewind: checkpoint ")
            && message.contains("is refused and nothing was restored: it covers ")
            && message.ends_with("which is not a working directory of this session"),
        "{message}"
    );
    assert_eq!(
        tree(&outside_dir),
        [("mine.txt".to_string(), "keep\n".to_string())].into()
    );
    assert_eq!(tree(tmp.path()), project_before);
}

/// Issue 29, section 2: what a rewind of the files cannot undo is named, in the list and in
/// the summary: an approved write outside the project (it stays), and a file over the
/// checkpoints' size cap that the turn overwrote (never copied, so it cannot come back).
#[tokio::test]
async fn a_rewind_names_the_writes_outside_and_the_files_over_the_cap_it_cannot_undo() {
    let tmp = project();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::write(root.join("big.bin"), vec![b'x'; 6 * 1024 * 1024]).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let out_file = std::fs::canonicalize(outside.path())
        .unwrap()
        .join("out.txt");
    let script = json!({"turns": [
        {"tool_calls": [
            {"id": "w1", "name": "Write",
             "input": {"file_path": out_file.display().to_string(), "content": "out\n"}},
            {"id": "w2", "name": "Write", "input": {"file_path": "new.txt", "content": "new\n"}},
            {"id": "b1", "name": "Bash", "input": {"command": "printf small > big.bin"}}
        ]},
        {"text": "Done."}
    ]});
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.prompt("regenerate").await;
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "out\n");

    let expected = [
        format!(
            "{} (written outside the working directories)",
            out_file.display()
        ),
        format!(
            "{} (over the 5 MiB size cap)",
            root.join("big.bin").display()
        ),
    ];
    let (points, _) = list_points(&mut agent).await;
    assert_eq!(points[0].not_undone, expected);

    let target = RewindTarget::Prompt {
        id: points[0].id.clone(),
    };
    let done = rewind(&mut agent, target, true, false, true).await;
    let Event::Rewound { summary, .. } = done else {
        panic!("{done:?}")
    };
    assert!(
        summary.ends_with(&format!("Not undone: {}; {}.", expected[0], expected[1])),
        "{summary}"
    );
    assert!(!root.join("new.txt").exists(), "the rest went back");
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "out\n");
    assert_eq!(
        std::fs::read_to_string(root.join("big.bin")).unwrap(),
        "small"
    );
}

/// Issue 29, section 3: a store over its budget prunes its oldest checkpoints and says so at
/// the end of the turn; `/rewind` shows the store's size, and a prompt whose checkpoint was
/// pruned rewinds its conversation only.
#[tokio::test]
async fn a_store_over_its_budget_is_pruned_and_the_person_is_told() {
    let tmp = project();
    let script = json!({"turns": [
        {"tool_calls": [{"id": "w1", "name": "Write",
                         "input": {"file_path": "one.txt", "content": "1\n"}}]},
        {"text": "first"},
        {"tool_calls": [{"id": "w2", "name": "Write",
                         "input": {"file_path": "two.txt", "content": "2\n"}}]},
        {"text": "second"}
    ]});
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.checkpoint_budget = Some(1);
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("one").await;
    let pruned: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { message } if message.contains("over its budget") => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(pruned.len(), 1, "{events:?}");
    assert!(
        pruned[0].starts_with("The /rewind store was over its budget (0.0 MB): its 1 oldest")
            && pruned[0].ends_with("prompts before them can rewind the conversation only."),
        "{}",
        pruned[0]
    );
    agent.prompt("two").await;

    agent.handle.ops.send(Op::RewindList).unwrap();
    let events = until(&mut agent, |e| matches!(e, Event::RewindPoints { .. })).await;
    let size = events.iter().find_map(|e| match e {
        Event::Notice { message }
            if message.starts_with("Checkpoints of the project's files take ") =>
        {
            Some(message.clone())
        }
        _ => None,
    });
    assert!(
        size.as_deref()
            .is_some_and(|m| m.ends_with(" MB of their 0.0 MB budget.")),
        "{events:?}"
    );
    let Some(Event::RewindPoints { points, .. }) = events.last() else {
        unreachable!()
    };
    let code: Vec<(&str, bool)> = points.iter().map(|p| (p.text.as_str(), p.code)).collect();
    assert_eq!(
        code,
        [("two", false), ("one", false)],
        "only the latest is kept"
    );
}
