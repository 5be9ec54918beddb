//! Background agents as the person sees them, without a terminal: the TUI's [`App`] on the real
//! core, which runs the Agent tool's `run_in_background` calls against the scripted model
//! server on 127.0.0.1. Keys go into the App, its Ops go to the core, the core's events come
//! back into the App; the test reads the App's notices (`/tasks`, the notice when a run ends)
//! and the requests the model got.
//!
//! The background agent's Bash call waits for a file the test creates, so "while it runs" lasts
//! exactly as long as the test needs (no timing).

use std::path::Path;
use std::time::Duration;

use cairn::commands::agents::AgentDef;
use cairn::config::LoadedSettings;
use cairn::llm::Provider;
use cairn::permissions::PermissionGate;
use cairn::protocol::{Event, Op, TaskStatus};
use cairn::tui::app::{App, AppConfig};
use cairn::tui::composer::history::History;
use cairn::tui::highlight::Highlighter;
use cairn::tui::input::{InputEvent, Key, KeyInput};
use cairn::tui::picker::PickerKind;
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup};

/// Waits (at most 20 s, so nothing outlives a failed test) for the file `release`.
const WAIT_SH: &str = "for i in $(seq 400); do [ -f release ] && break; sleep 0.05; done\n\
                       echo parse-found\n";

/// A gate that lets `sh wait.sh` run without asking.
fn gate(dir: &Path) -> PermissionGate {
    let settings = LoadedSettings {
        project_root: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        ..LoadedSettings::default()
    };
    agent::gate_allowing(
        dir,
        &settings,
        vec!["Bash(sh wait.sh)".into(), "Bash(sh out.sh)".into()],
    )
}

/// The parent starts agent `alpha` in the background and ends its turn; `alpha` runs
/// `sh wait.sh`, then reports. The parent's later turns answer `later`.
fn script(later: &[&str]) -> Value {
    let mut turns = vec![
        json!({"tool_calls": [{"id": "a1", "name": "Agent", "input": {
            "description": "find the parser", "prompt": "find parse()",
            "subagent_type": "alpha", "run_in_background": true}}]}),
        json!({"text": "Started it."}),
    ];
    turns.extend(later.iter().map(|t| json!({"text": t})));
    json!({
        "turns": turns,
        "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
            {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "sh wait.sh"}}]},
            {"text": "parse() is in src/parse.rs:12"}
        ]}]
    })
}

/// The App wired to a real core.
struct Tui {
    agent: Agent,
    app: App,
    ops: mpsc::UnboundedReceiver<Op>,
    /// Every event of the core so far.
    seen: Vec<Event>,
}

impl Tui {
    fn start(dir: &Path, script: &Value) -> Tui {
        std::fs::write(dir.join("wait.sh"), WAIT_SH).unwrap();
        let mut setup = Setup::in_dir(dir, Provider::Anthropic);
        setup.gate = gate(dir);
        setup.agents = vec![AgentDef {
            name: "alpha".into(),
            description: "the alpha agent".into(),
            tools: Some(vec!["Bash".into()]),
            disallowed_tools: Vec::new(),
            model: None,
            color: None,
            prompt: "ALPHA-ROLE".into(),
            path: dir.join("alpha.md"),
            ..Default::default()
        }];
        let agent = Agent::start(script, setup);
        let (tx, ops) = mpsc::unbounded_channel();
        let config = AppConfig {
            cwd: dir.to_path_buf(),
            bypass_allowed: false,
            highlighter: Highlighter::plain(),
        };
        let app = App::new(config, History::in_memory(Vec::new()), tx);
        Tui {
            agent,
            app,
            ops,
            seen: Vec::new(),
        }
    }

    fn press(&mut self, code: Key) {
        self.app
            .handle_input(InputEvent::Key(KeyInput::plain(code)));
    }

    /// Type `line` and press Enter.
    fn enter(&mut self, line: &str) {
        for c in line.chars() {
            self.press(Key::Char(c));
        }
        self.press(Key::Enter);
    }

    /// Pass the App's Ops to the core and the core's events to the App until `until` holds
    /// for the events seen so far (all of them, since the start).
    async fn pump(&mut self, until: impl Fn(&[Event]) -> bool) {
        while !until(&self.seen) {
            while let Ok(op) = self.ops.try_recv() {
                self.agent.handle.ops.send(op).unwrap();
            }
            let event =
                tokio::time::timeout(Duration::from_secs(30), self.agent.handle.events.recv())
                    .await
                    .expect("no event in time")
                    .expect("the core stopped");
            self.app.handle_core_event(&event);
            self.seen.push(event);
        }
    }

    /// The open picker: its kind and labels.
    fn picker(&self) -> Option<(PickerKind, Vec<String>)> {
        self.app
            .picker()
            .map(|p| (p.kind, p.items.iter().map(|i| i.label.clone()).collect()))
    }

    fn notices(&self) -> Vec<String> {
        self.app
            .conversation()
            .notices()
            .map(str::to_string)
            .collect()
    }

    /// The `/tasks` view's rows (`id  detail`); it leaves the conversation alone.
    fn tasks(&mut self) -> Vec<String> {
        let before = self.notices();
        self.enter("/tasks");
        assert_eq!(
            self.notices(),
            before,
            "/tasks adds nothing to the conversation"
        );
        let (kind, _) = self.picker().expect("/tasks opens its view");
        assert_eq!(kind, PickerKind::Tasks);
        self.app
            .picker()
            .map(|p| {
                p.items
                    .iter()
                    .map(|i| format!("{}  {}", i.label, i.detail))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn task_status(event: &Event) -> Option<TaskStatus> {
    match event {
        Event::BackgroundTask(t) => Some(t.status),
        _ => None,
    }
}

/// How many turns have finished.
fn turns_finished(seen: &[Event]) -> usize {
    seen.iter()
        .filter(|e| matches!(e, Event::TurnFinished { .. }))
        .count()
}

/// Whether the background agent's Bash call has started (and so waits for `release`).
fn sub_bash_started(seen: &[Event]) -> bool {
    seen.iter().any(|e| {
        matches!(e, Event::Subagent { event, .. }
            if matches!(&**event, Event::ToolCallStarted { call_id, .. } if call_id == "b1"))
    })
}

/// Whether the App sent an [`Op::StopTask`] (the other ops it sent are dropped).
fn stop_sent(ops: &mut mpsc::UnboundedReceiver<Op>) -> bool {
    let mut stop = false;
    while let Ok(op) = ops.try_recv() {
        stop |= matches!(op, Op::StopTask { .. });
    }
    stop
}

fn statuses(seen: &[Event]) -> Vec<TaskStatus> {
    seen.iter().filter_map(task_status).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_lists_a_running_background_agent_and_its_end_wakes_the_idle_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut tui = Tui::start(dir, &script(&["Thanks, noted."]));
    assert_eq!(
        tui.tasks(),
        [
            "No background tasks in this session  the model starts them with run_in_background \
          (Agent or Bash)"
        ]
    );
    tui.press(Key::Esc);
    tui.enter("look in the background");
    // The turn ends with the agent still at work: its Bash call waits for `release`.
    tui.pump(|seen| turns_finished(seen) == 1 && sub_bash_started(seen))
        .await;
    assert_eq!(statuses(&tui.seen), [TaskStatus::Running]);
    let rows = tui.tasks();
    assert!(
        rows.len() == 1
            && rows[0].starts_with("agent-1  alpha · find the parser · ")
            && rows[0].ends_with(" · running"),
        "{rows:?}"
    );
    assert!(
        !tui.notices().iter().any(|n| n.contains("finished")),
        "{:?}",
        tui.notices()
    );
    // The view lists it; Esc closes it and stops nothing.
    assert_eq!(
        tui.picker(),
        Some((PickerKind::Tasks, vec!["agent-1".into()]))
    );
    tui.press(Key::Esc);
    assert_eq!(tui.picker(), None);

    std::fs::write(dir.join("release"), "").unwrap();
    tui.pump(|seen| statuses(seen).contains(&TaskStatus::Completed))
        .await;
    let notices = tui.notices();
    assert_eq!(
        notices.last().map(String::as_str),
        Some(
            "Background agent agent-1 (alpha · find the parser) finished: the model is sent \
             its report now."
        ),
        "{notices:?}"
    );
    let rows = tui.tasks();
    assert!(
        rows.len() == 1
            && rows[0].starts_with("agent-1  alpha · find the parser · ")
            && rows[0].ends_with(" · completed"),
        "{rows:?}"
    );
    // Enter on the ended one shows it; nothing is left to stop.
    tui.press(Key::Enter);
    assert_eq!(tui.picker(), None);
    assert!(tui.app.is_task_view_open());
    tui.press(Key::Char('k'));
    assert!(!stop_sent(&mut tui.ops), "no stop for an ended agent");
    tui.press(Key::Esc);
    // As the notice says: the session was idle, so the model is woken with the report,
    // nobody typing anything (Claude Code sends such a request by itself).
    tui.pump(|seen| turns_finished(seen) == 2).await;
    let requests = tui.agent.server.requests();
    let parent: Vec<_> = requests
        .iter()
        .filter(|r| !r.body["system"].to_string().contains("ALPHA-ROLE"))
        .collect();
    assert_eq!(
        parent.len(),
        3,
        "the first turn's two requests, then the wake"
    );
    let messages = parent[2].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let text = last["content"].to_string();
    assert!(
        text.contains("Background agent agent-1 (alpha: find the parser) finished")
            && text.contains("parse() is in src/parse.rs:12"),
        "{text}"
    );
    assert!(
        !messages
            .iter()
            .any(|m| m.to_string().contains("anything new?")),
        "no prompt was typed"
    );
    assert_eq!(
        tui.app.conversation().last_answer().as_deref(),
        Some("Thanks, noted.")
    );
    // A resume shows the Agent call as it ended, not "Running in the background".
    let resumed = cairn::session::resume::load(&dir.join(".data").join("t.jsonl")).unwrap();
    match resumed.shown.get("a1") {
        Some((cairn::protocol::Display::Markdown { text }, _)) => assert!(
            text.starts_with("Done in the background as agent-1 (")
                && text.ends_with("parse() is in src/parse.rs:12"),
            "{text}"
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_stops_a_running_background_agent_and_the_model_is_told_the_person_did() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut tui = Tui::start(dir, &script(&["Understood, it was stopped."]));
    tui.enter("look in the background");
    tui.pump(|seen| turns_finished(seen) == 1 && sub_bash_started(seen))
        .await;
    // /tasks, Enter on the running one opens its view; Esc goes back and stops nothing.
    tui.tasks();
    assert_eq!(
        tui.picker(),
        Some((PickerKind::Tasks, vec!["agent-1".into()]))
    );
    tui.press(Key::Enter);
    assert_eq!(tui.picker(), None);
    assert!(tui.app.is_task_view_open());
    tui.press(Key::Esc);
    assert!(!tui.app.is_task_view_open());
    assert!(!stop_sent(&mut tui.ops), "Esc stops nothing");
    // `k` in its view stops it.
    tui.tasks();
    tui.press(Key::Enter);
    tui.press(Key::Char('k'));
    // Its Bash call never saw `release`: the stop cut it short.
    tui.pump(|seen| statuses(seen).contains(&TaskStatus::Stopped))
        .await;
    assert_eq!(
        statuses(&tui.seen),
        [TaskStatus::Running, TaskStatus::Stopped]
    );
    let notices = tui.notices();
    assert_eq!(
        notices.last().map(String::as_str),
        Some("Background agent agent-1 (alpha · find the parser) was stopped."),
        "{notices:?}"
    );
    // The view stays, showing the end; Esc goes back.
    assert!(tui.app.is_task_view_open());
    tui.press(Key::Esc);
    let rows = tui.tasks();
    assert!(rows[0].ends_with(" · stopped"), "{rows:?}");
    tui.press(Key::Enter);
    tui.press(Key::Char('k'));
    assert!(!stop_sent(&mut tui.ops), "nothing left to stop");
    tui.press(Key::Esc);
    // The model hears of it with the next message; the agent never asked for more.
    tui.enter("what happened?");
    tui.pump(|seen| turns_finished(seen) == 2).await;
    let requests = tui.agent.server.requests();
    let last = requests.last().unwrap().body["messages"].to_string();
    assert!(
        last.contains(
            "Background agent agent-1 (alpha: find the parser) was stopped by the user before \
             it finished; it has no report."
        ),
        "{last}"
    );
    let alpha = requests
        .iter()
        .filter(|r| r.body["system"].to_string().contains("ALPHA-ROLE"))
        .count();
    assert_eq!(alpha, 1, "the stopped agent made no further request");
    assert!(!last.contains("src/parse.rs"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_an_agent_that_is_not_running_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(tmp.path(), &script(&[]));
    tui.agent
        .handle
        .ops
        .send(Op::StopTask {
            id: "agent-7".into(),
        })
        .unwrap();
    tui.pump(|seen| seen.iter().any(|e| matches!(e, Event::Notice { .. })))
        .await;
    assert_eq!(
        tui.notices().last().map(String::as_str),
        Some("No background task agent-7 is running.")
    );
}

/// A background agent asks for permission while the person's turn is still running; that turn
/// ends before the person answers. The question must stay open: the agent waits for it, and
/// nobody else will ever answer it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_agents_permission_prompt_outlives_the_turn_that_was_running() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let script = json!({
        "turns": [
            {"tool_calls": [
                {"id": "a1", "name": "Agent", "input": {
                    "description": "make a file", "prompt": "touch made.txt",
                    "subagent_type": "alpha", "run_in_background": true}},
                {"id": "f1", "name": "Bash", "input": {"command": "sh wait.sh"}}
            ]},
            {"text": "Both going."}
        ],
        "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
            {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "touch made.txt"}}]},
            {"text": "made it"}
        ]}]
    });
    let mut tui = Tui::start(dir, &script);
    tui.enter("start both");
    // The background agent asks while the turn's own Bash call still waits for `release`.
    tui.pump(|seen| {
        seen.iter()
            .any(|e| matches!(e, Event::PermissionRequest(r) if r.call_id == "b1"))
    })
    .await;
    assert_eq!(turns_finished(&tui.seen), 0);
    let tagged = tui.seen.iter().find_map(|e| match e {
        Event::PermissionRequest(r) if r.call_id == "b1" => Some(r.background_task.clone()),
        _ => None,
    });
    assert_eq!(tagged, Some(Some("agent-1".to_string())));
    let asked = |tui: &Tui| {
        tui.app
            .permission_prompt()
            .and_then(|p| p.current())
            .map(|r| r.title.clone())
    };
    assert_eq!(asked(&tui).as_deref(), Some("alpha › Bash touch made.txt"));
    std::fs::write(dir.join("release"), "").unwrap();
    tui.pump(|seen| turns_finished(seen) == 1).await;
    assert_eq!(
        asked(&tui).as_deref(),
        Some("alpha › Bash touch made.txt"),
        "the background agent's question is still open"
    );
    tui.press(Key::Char('1'));
    tui.pump(|seen| statuses(seen).contains(&TaskStatus::Completed))
        .await;
    assert!(dir.join("made.txt").exists());
    assert!(tui.app.permission_prompt().is_none());
}

/// A Setup whose agent `alpha` runs `sh wait.sh` (waiting for `release`) before it reports.
fn alpha_setup(dir: &Path, provider: Provider) -> Setup {
    std::fs::write(dir.join("wait.sh"), WAIT_SH).unwrap();
    let mut setup = Setup::in_dir(dir, provider);
    setup.gate = gate(dir);
    setup.agents = vec![AgentDef {
        name: "alpha".into(),
        description: "the alpha agent".into(),
        tools: Some(vec!["Bash".into()]),
        prompt: "ALPHA-ROLE".into(),
        path: dir.join("alpha.md"),
        ..Default::default()
    }];
    setup
}

/// The tool results the parent conversation's last request carried.
fn parent_results(agent: &Agent) -> Vec<(String, bool)> {
    let requests = agent.server.requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| !r.body["system"].to_string().contains("ALPHA-ROLE"))
        .unwrap();
    agent::tool_results(&last.body)
}

/// TaskOutput reads a background agent: running (no output yet) at first, then, with
/// `block`, its report once it ends; on both wire formats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_output_reads_a_background_agent_and_block_waits_for_its_report() {
    for provider in [Provider::Anthropic, Provider::OpenAi] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let script = json!({
            "turns": [
                {"tool_calls": [{"id": "a1", "name": "Agent", "input": {
                    "description": "find the parser", "prompt": "find parse()",
                    "subagent_type": "alpha", "run_in_background": true}}]},
                {"tool_calls": [{"id": "o1", "name": "TaskOutput",
                                 "input": {"task_id": "agent-1"}}]},
                {"tool_calls": [{"id": "o2", "name": "TaskOutput",
                                 "input": {"task_id": "agent-1", "block": true,
                                           "timeout": 20000}}]},
                {"text": "Got it."}
            ],
            "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
                {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "sh wait.sh"}}]},
                {"text": "parse() is in src/parse.rs:12"}
            ]}]
        });
        let mut agent = Agent::start(&script, alpha_setup(dir, provider));
        agent.submit("look in the background");
        // Released once the first TaskOutput has read it running.
        let mut events = Vec::new();
        let mut released = false;
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(30), agent.handle.events.recv())
                .await
                .unwrap()
                .unwrap();
            if !released
                && matches!(&ev, Event::ToolCallFinished { call_id, .. } if call_id == "o1")
            {
                std::fs::write(dir.join("release"), "").unwrap();
                released = true;
            }
            let done = matches!(ev, Event::TurnFinished { .. });
            events.push(ev);
            if done {
                break;
            }
        }
        let results = parent_results(&agent);
        let (running, _) = &results[1];
        assert!(
            running.starts_with(
                "<status>running</status>\n<agent>agent-1 (alpha: find the parser)</agent>\n\
                 (no output yet"
            ),
            "{provider:?}: {running}"
        );
        let (done, is_error) = &results[2];
        assert!(!is_error);
        assert_eq!(
            done,
            "<status>completed</status>\n<agent>agent-1 (alpha: find the parser)</agent>\n\
             <output>\nparse() is in src/parse.rs:12\n</output>",
            "{provider:?}"
        );
    }
}

/// TaskStop stops a running background agent (its Bash call never sees `release`), says so,
/// and no report or "stopped by the user" reminder follows; on both wire formats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_stop_stops_a_background_agent() {
    for provider in [Provider::Anthropic, Provider::OpenAi] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let script = json!({
            "turns": [
                {"tool_calls": [{"id": "a1", "name": "Agent", "input": {
                    "description": "find the parser", "prompt": "find parse()",
                    "subagent_type": "alpha", "run_in_background": true}}]},
                {"tool_calls": [{"id": "s1", "name": "TaskStop",
                                 "input": {"task_id": "agent-1"}}]},
                {"tool_calls": [{"id": "o1", "name": "TaskOutput",
                                 "input": {"task_id": "agent-1", "block": true}}]},
                {"tool_calls": [{"id": "s2", "name": "TaskStop",
                                 "input": {"task_id": "agent-1"}}]},
                {"text": "Stopped."}
            ],
            "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
                {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "sh wait.sh"}}]},
                {"text": "parse() is in src/parse.rs:12"}
            ]}]
        });
        let mut agent = Agent::start(&script, alpha_setup(dir, provider));
        agent.prompt("look in the background").await;
        let results = parent_results(&agent);
        assert_eq!(
            results[1],
            (
                "Successfully stopped background agent: agent-1 (alpha: find the parser); it \
                 sends no report."
                    .to_string(),
                false
            ),
            "{provider:?}"
        );
        assert!(
            results[2].0.starts_with("<status>killed</status>"),
            "{provider:?}: {:?}",
            results[2]
        );
        assert!(
            results[3]
                .0
                .contains("Background agent agent-1 is not running, so it cannot be stopped"),
            "{provider:?}: {:?}",
            results[3]
        );
        let all = agent.server.requests().last().unwrap().body.to_string();
        assert!(!all.contains("stopped by the user"), "{provider:?}");
        assert!(!all.contains("src/parse.rs"), "{provider:?}");
    }
}

/// Issue #27 item 6: the TUI could not find the Agent call's cell (the event lacked its call
/// id), and a background shell's output never reached the person. The Agent call's and the
/// shell's events carry their calls' ids; `/tasks` lists the shell beside the agent, its view
/// shows the shell's output so far (asked of the core), and `k` stops it as TaskStop would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_tasks_name_their_calls_and_a_shells_output_reaches_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("out.sh"),
        "echo shell-out-1\nfor i in $(seq 400); do [ -f release ] && break; sleep 0.05; done\n\
         echo shell-out-2\n",
    )
    .unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [
                {"id": "a1", "name": "Agent", "input": {
                    "description": "find the parser", "prompt": "find parse()",
                    "subagent_type": "alpha", "run_in_background": true}},
                {"id": "s1", "name": "Bash", "input": {
                    "command": "sh out.sh", "run_in_background": true}}
            ]},
            {"text": "Both going."}
        ],
        "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
            {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "sh wait.sh"}}]},
            {"text": "parse() is in src/parse.rs:12"}
        ]}]
    });
    let mut tui = Tui::start(dir, &script);
    tui.enter("start both");
    tui.pump(|seen| turns_finished(seen) == 1 && sub_bash_started(seen))
        .await;
    let started: Vec<(String, Option<String>)> = tui
        .seen
        .iter()
        .filter_map(|e| match e {
            Event::BackgroundTask(t) => Some((t.id.clone(), t.call_id.clone())),
            _ => None,
        })
        .collect();
    assert!(
        started.contains(&("agent-1".into(), Some("a1".into())))
            && started.contains(&("bash_1".into(), Some("s1".into()))),
        "{started:?}"
    );
    let rows = tui.tasks();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("bash_1  shell · sh out.sh · ") && r.ends_with(" · running")),
        "{rows:?}"
    );
    let shell_row = rows.iter().position(|r| r.starts_with("bash_1")).unwrap();
    for _ in 0..shell_row {
        tui.press(Key::Down);
    }
    tui.press(Key::Enter);
    assert!(tui.app.is_task_view_open());
    // The view asks until the output has come (the tick asks again every half second).
    let out = |seen: &[Event]| {
        seen.iter().any(|e| {
            matches!(e, Event::TaskOutput { id, output, .. }
            if id == "bash_1" && output.contains("shell-out-1"))
        })
    };
    while !out(&tui.seen) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        tui.app.tick(std::time::Instant::now());
        tui.pump(|seen| seen.iter().any(|e| matches!(e, Event::TaskOutput { .. })))
            .await;
        tui.seen
            .retain(|e| !matches!(e, Event::TaskOutput { .. }) || out(std::slice::from_ref(e)));
    }
    tui.press(Key::Char('k'));
    tui.pump(|seen| {
        seen.iter().any(|e| {
            matches!(e, Event::BackgroundTask(t)
            if t.id == "bash_1" && t.status == TaskStatus::Stopped)
        })
    })
    .await;
    std::fs::write(dir.join("release"), "").unwrap();
    tui.pump(|seen| {
        seen.iter().any(|e| {
            matches!(e, Event::BackgroundTask(t)
            if t.id == "agent-1" && t.status == TaskStatus::Completed
                && t.report.as_deref() == Some("parse() is in src/parse.rs:12"))
        })
    })
    .await;
}
