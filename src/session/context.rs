//! The state one session shares between the agent loop, the tools and the permission gate:
//! working directories, the read-file state, the session's data directory, the event sender,
//! reminders queued for the model's next request, news of tracked files changed on disk (for
//! whoever waits on a proposal about one), the model's todo list, the handle on the
//! checkpoints of the working directories, and the client's files when it serves them.
//!
//! Tools that need state of their own (background shells, the web cache) own it themselves;
//! only what several parts share lives here.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::{broadcast, mpsc};

use crate::files::client::ClientFiles;
use crate::files::state::ReadFileState;
use crate::protocol::{Event, Todo};
use crate::session::checkpoints::SessionCheckpoints;
use crate::shell::client::ClientTerminal;

/// Sends [`Event`]s to the client. Sending never fails: a client that went away is ignored.
#[derive(Clone, Debug)]
pub struct EventSender(mpsc::UnboundedSender<Event>);

impl EventSender {
    pub fn new(tx: mpsc::UnboundedSender<Event>) -> Self {
        EventSender(tx)
    }

    /// A sender whose events go nowhere, with the receiver to read them in tests.
    pub fn channel() -> (EventSender, mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (EventSender(tx), rx)
    }

    pub fn send(&self, event: Event) {
        let _ = self.0.send(event);
    }
}

/// Checks the new content of a file (`path`, `before`, `after`): an error when it is a
/// settings file the write would leave unusable or without some of its deny rules.
/// `.1` says whether a path is a settings file at all (whether `.0` looks at it).
#[derive(Clone)]
pub struct SettingsWriteCheck(pub Arc<SettingsCheckFn>, pub Arc<SettingsCoversFn>);

/// The function inside a [`SettingsWriteCheck`].
pub type SettingsCheckFn = dyn Fn(&Path, &str, &str) -> Result<(), String> + Send + Sync;

/// Whether a path is one a [`SettingsWriteCheck`] checks.
pub type SettingsCoversFn = dyn Fn(&Path) -> bool + Send + Sync;

impl std::fmt::Debug for SettingsWriteCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SettingsWriteCheck")
    }
}

/// Shared per-session state. Cheap to clone through its `Arc`.
#[derive(Debug)]
pub struct SessionContext {
    pub session_id: String,
    /// This conversation among the session's (the main one, each sub-agent's): what the
    /// permission gate allows for one conversation's turn is kept under it.
    pub conversation: String,
    /// Where cairn was started: the root for relative permission rules.
    pub project_dir: PathBuf,
    /// The current directory for tools; Bash's `cd` moves it within the working directories.
    cwd: RwLock<PathBuf>,
    /// Directories besides `project_dir` the tools may work in (`--add-dir`, settings).
    pub additional_dirs: Vec<PathBuf>,
    /// Where spill files and the transcript go.
    pub data_dir: PathBuf,
    pub read_files: Arc<ReadFileState>,
    pub events: EventSender,
    reminders: Mutex<Vec<String>>,
    /// Problems told to the client after a call's edit ([`Event::ToolDiagnostics`]), waiting
    /// to be written to the transcript.
    diagnostics_told: Mutex<Vec<crate::protocol::Event>>,
    /// What calls that started background work show now it ended (call id, display),
    /// waiting to be written to the transcript so a resume shows the end, not "running".
    shown_later: Mutex<Vec<(String, crate::protocol::Display)>>,
    /// Notices of background work that ended (agents, shells) not yet known to be sent, and
    /// the signal the idle core waits on to send them by themselves (see
    /// [`SessionContext::background_finished`]).
    wake: Mutex<Vec<String>>,
    woken: tokio::sync::Notify,
    /// The background agents this conversation started (TaskOutput and TaskStop read them).
    pub agent_tasks: Arc<super::agent_tasks::AgentTasks>,
    /// The settings' `env`: added to the environment of the commands tools run.
    tool_env: Vec<(String, String)>,
    /// The web search service WebSearch asks, when one is configured or the provider has one.
    search: Option<Arc<dyn super::search::SearchBackend>>,
    /// The small, fast model tools may ask (WebFetch's reader).
    small_model: Option<super::small_model::SmallModel>,
    /// Checks a write to a settings file (set by whoever knows the settings layers).
    settings_check: Option<SettingsWriteCheck>,
    /// Tracked files that changed on disk (from outside), as the watcher notices them.
    changes: broadcast::Sender<PathBuf>,
    /// The model's todo list (TodoWrite), whole.
    todos: Mutex<Vec<Todo>>,
    /// Subdirectories whose memory files were already looked for (each is looked at once).
    memory_dirs: Mutex<Vec<PathBuf>>,
    /// The roots the session's memory was loaded under, for subdirectories' memory files.
    memory_roots: Option<crate::memory::Roots>,
    /// The model a skill asked for, for the rest of the turn.
    turn_model: Mutex<Option<String>>,
    /// The checkpoints of the working directories (`/rewind`).
    pub checkpoints: SessionCheckpoints,
    /// The client's files (an editor's buffers), when the client serves them: the text file
    /// tools read and write through it.
    client_files: Option<Arc<dyn ClientFiles>>,
    /// The client's terminals (an editor's), when it offers them: Bash runs its foreground
    /// commands there.
    client_terminal: Option<Arc<dyn ClientTerminal>>,
}

impl SessionContext {
    pub fn new(
        session_id: String,
        project_dir: PathBuf,
        additional_dirs: Vec<PathBuf>,
        data_dir: PathBuf,
        events: EventSender,
    ) -> SessionContext {
        SessionContext {
            session_id,
            conversation: uuid::Uuid::new_v4().simple().to_string(),
            cwd: RwLock::new(project_dir.clone()),
            project_dir,
            additional_dirs,
            data_dir,
            read_files: Arc::new(ReadFileState::default()),
            events,
            reminders: Mutex::new(Vec::new()),
            diagnostics_told: Mutex::new(Vec::new()),
            shown_later: Mutex::new(Vec::new()),
            wake: Mutex::new(Vec::new()),
            woken: tokio::sync::Notify::new(),
            agent_tasks: Arc::default(),
            tool_env: Vec::new(),
            search: None,
            small_model: None,
            settings_check: None,
            changes: broadcast::channel(64).0,
            todos: Mutex::new(Vec::new()),
            memory_dirs: Mutex::new(Vec::new()),
            memory_roots: None,
            turn_model: Mutex::new(None),
            checkpoints: SessionCheckpoints::disabled(),
            client_files: None,
            client_terminal: None,
        }
    }

    /// Read and write text files through the client (see `files::client`).
    pub fn with_client_files(mut self, files: Option<Arc<dyn ClientFiles>>) -> SessionContext {
        self.client_files = files;
        self
    }

    /// The client's files, when it serves them (also for a sub-agent's context).
    pub fn client_files(&self) -> Option<Arc<dyn ClientFiles>> {
        self.client_files.clone()
    }

    /// Run Bash's foreground commands in the client's terminals (see `shell::client`).
    pub fn with_client_terminal(
        mut self,
        terminal: Option<Arc<dyn ClientTerminal>>,
    ) -> SessionContext {
        self.client_terminal = terminal;
        self
    }

    /// The client's terminals, when it offers them (also for a sub-agent's context).
    pub fn client_terminal(&self) -> Option<Arc<dyn ClientTerminal>> {
        self.client_terminal.clone()
    }

    /// Keep checkpoints of the working directories in `store_dir`, never walking into `skip`.
    /// `budget`: the store's size budget in bytes (`None`: the default for the tree).
    pub fn with_checkpoints(
        mut self,
        store_dir: PathBuf,
        skip: Vec<PathBuf>,
        budget: Option<u64>,
    ) -> SessionContext {
        self.checkpoints =
            SessionCheckpoints::new(Some(store_dir), self.working_dirs(), skip).with_budget(budget);
        self
    }

    /// Set the variables the settings' `env` adds for the commands tools run.
    pub fn with_tool_env(mut self, env: Vec<(String, String)>) -> SessionContext {
        self.tool_env = env;
        self
    }

    /// Set the web search service (sub-agents share their parent's).
    pub fn with_search(
        mut self,
        search: Option<Arc<dyn super::search::SearchBackend>>,
    ) -> SessionContext {
        self.search = search;
        self
    }

    /// Set the small, fast model tools may ask (sub-agents share their parent's).
    pub fn with_small_model(
        mut self,
        model: Option<super::small_model::SmallModel>,
    ) -> SessionContext {
        self.small_model = model;
        self
    }

    /// The small, fast model, if the session has one.
    pub fn small_model(&self) -> Option<&super::small_model::SmallModel> {
        self.small_model.as_ref()
    }

    /// The web search service, if the session has one.
    pub fn search(&self) -> Option<&Arc<dyn super::search::SearchBackend>> {
        self.search.as_ref()
    }

    /// Read subdirectories' memory files under `roots` (the session's memory's).
    pub fn with_memory_roots(mut self, roots: Option<crate::memory::Roots>) -> SessionContext {
        self.memory_roots = roots;
        self
    }

    /// The roots for subdirectories' memory files: those the session's memory was loaded
    /// under, else the project directory as the project with nothing outside approved.
    pub fn memory_roots(&self) -> crate::memory::Roots {
        self.memory_roots.clone().unwrap_or_else(|| {
            let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
            crate::memory::Roots::standard(home, self.project_dir.clone(), self.cwd())
        })
    }

    pub fn tool_env(&self) -> &[(String, String)] {
        &self.tool_env
    }

    /// Set the check of writes to settings files.
    pub fn with_settings_check(mut self, check: Option<SettingsWriteCheck>) -> SessionContext {
        self.settings_check = check;
        self
    }

    /// The check of writes to settings files, to hand to a sub-agent's context.
    pub fn settings_check(&self) -> Option<SettingsWriteCheck> {
        self.settings_check.clone()
    }

    /// Whether writes to `path` are checked as a settings file's
    /// ([`Self::check_settings_write`]): only then does the check need the text before.
    pub fn is_settings_file(&self, path: &Path) -> bool {
        self.settings_check
            .as_ref()
            .is_some_and(|check| (check.1)(path))
    }

    /// Ok unless writing `after` over `before` at `path` would break a settings file (the
    /// error says how, for the model).
    pub fn check_settings_write(
        &self,
        path: &Path,
        before: &str,
        after: &str,
    ) -> Result<(), String> {
        match &self.settings_check {
            Some(check) => (check.0)(path, before, after),
            None => Ok(()),
        }
    }

    /// A context for tests and benchmarks: everything under `dir`, events dropped.
    pub fn for_dir(dir: &Path) -> Arc<SessionContext> {
        let (events, _rx) = EventSender::channel();
        Arc::new(SessionContext::new(
            "test-session".into(),
            dir.to_path_buf(),
            Vec::new(),
            dir.join(".cairn-data"),
            events,
        ))
    }

    pub fn cwd(&self) -> PathBuf {
        match self.cwd.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set_cwd(&self, dir: PathBuf) {
        match self.cwd.write() {
            Ok(mut g) => *g = dir,
            Err(poisoned) => *poisoned.into_inner() = dir,
        }
    }

    /// The project directory and the additional ones: where tools may work.
    pub fn working_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.project_dir.clone()];
        dirs.extend(self.additional_dirs.iter().cloned());
        dirs
    }

    /// Queue a short note for the model's next request (wrapped in `<system-reminder>`).
    pub fn remind(&self, text: impl Into<String>) {
        let text = text.into();
        let mut r = match self.reminders.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !r.contains(&text) {
            r.push(text);
        }
    }

    /// A tracked file differs from what cairn last read or wrote: tell the subscribers.
    pub fn file_changed(&self, path: &Path) {
        // No subscriber is the usual case, and not an error.
        let _ = self.changes.send(path.to_path_buf());
    }

    /// News of tracked files changed on disk from now on. A receiver that falls behind gets
    /// `Lagged` and should treat every file as possibly changed.
    pub fn subscribe_changes(&self) -> broadcast::Receiver<PathBuf> {
        self.changes.subscribe()
    }

    /// Whether `dir`'s memory files are still to be looked for (and from now on, not).
    pub fn first_memory_dir(&self, dir: &Path) -> bool {
        let mut seen = match self.memory_dirs.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if seen.iter().any(|p| p == dir) {
            return false;
        }
        seen.push(dir.to_path_buf());
        true
    }

    /// The todo list as the model last wrote it.
    pub fn todos(&self) -> Vec<Todo> {
        match self.todos.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Use `model` (a name or alias) for the rest of the turn; `None` goes back to the
    /// session's model.
    pub fn set_turn_model(&self, model: Option<String>) {
        match self.turn_model.lock() {
            Ok(mut g) => *g = model,
            Err(poisoned) => *poisoned.into_inner() = model,
        }
    }

    pub fn turn_model(&self) -> Option<String> {
        match self.turn_model.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set_todos(&self, todos: Vec<Todo>) {
        match self.todos.lock() {
            Ok(mut g) => *g = todos,
            Err(poisoned) => *poisoned.into_inner() = todos,
        }
    }

    /// Tell the client about problems found after a call's edit, and keep the event for the
    /// transcript (a resume shows them again).
    pub fn tell_diagnostics(&self, event: crate::protocol::Event) {
        self.diagnostics_told
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event.clone());
        self.events.send(event);
    }

    /// The diagnostics events told since the last call.
    pub fn take_diagnostics_told(&self) -> Vec<crate::protocol::Event> {
        std::mem::take(
            &mut *self
                .diagnostics_told
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    /// Call `call_id` (which started background work) now shows `display`: kept for the
    /// transcript, written with the next request (which carries the work's end to the model).
    pub fn show_later(&self, call_id: &str, display: crate::protocol::Display) {
        self.shown_later
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((call_id.to_string(), display));
    }

    /// What [`SessionContext::show_later`] kept since the last call.
    pub fn take_shown_later(&self) -> Vec<(String, crate::protocol::Display)> {
        std::mem::take(&mut *self.shown_later.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn take_reminders(&self) -> Vec<String> {
        match self.reminders.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// Background work (an agent, a shell) ended: `notice` is queued like a reminder, and a
    /// core waiting idle is woken to send it by itself ([`SessionContext::background_woke`]).
    /// A running turn takes it with its next request, as any reminder.
    pub fn background_finished(&self, notice: impl Into<String>) {
        let notice = notice.into();
        self.remind(notice.clone());
        self.wake
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(notice);
        self.woken.notify_one();
    }

    /// Wait until background work ended since the last call (or a signal was left unread).
    pub async fn background_woke(&self) {
        self.woken.notified().await;
    }

    /// Whether a notice of [`SessionContext::background_finished`] is still waiting to be
    /// sent (a running turn may have taken it already); forgets the notices either way.
    pub fn take_wake(&self) -> bool {
        let notices = std::mem::take(&mut *self.wake.lock().unwrap_or_else(|e| e.into_inner()));
        let reminders = self.reminders.lock().unwrap_or_else(|e| e.into_inner());
        notices.iter().any(|n| reminders.contains(n))
    }
}
