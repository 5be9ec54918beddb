//! cairn's side of one MCP session ([`Handler`]): it declares `roots` and answers `roots/list`
//! with the session's working directories, forwards a call's progress notifications to that
//! call's tool progress, and passes the server's `list_changed` notifications on as
//! [`Notice`]s. [`Watched`] wraps a transport so that its end (the child exited, the stream
//! closed) is a [`Notice::Closed`] at once, not something found out at the next call.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

// Roots are deprecated by a newer protocol revision (SEP-2577), but the servers people run today
// (the reference ones included) still ask for them.
#[allow(deprecated)]
use rmcp::model::{
    ClientConfig, ListRootsResult, NumberOrString, ProgressNotificationParam, ProgressToken, Root,
    RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use tokio::sync::mpsc::UnboundedSender;

use crate::tools::ProgressSender;

/// What a connection tells its server, as it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/{tools,resources,prompts}/list_changed`: read the lists again.
    ListsChanged,
    /// The transport ended: the process exited or the stream closed.
    Closed,
}

/// How many list changes a server announced, and how many of them its lists have been read
/// after: a call that saw a change answers only once the lists are read again (at most
/// [`ListSync::BOUND`] later), so the model's next request already has the new tools.
pub struct ListSync {
    seen: std::sync::atomic::AtomicU64,
    done: tokio::sync::watch::Sender<u64>,
}

impl Default for ListSync {
    fn default() -> Self {
        ListSync {
            seen: Default::default(),
            done: tokio::sync::watch::channel(0).0,
        }
    }
}

impl ListSync {
    pub const BOUND: std::time::Duration = std::time::Duration::from_secs(2);

    fn announced(&self) {
        self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// The changes announced so far (take before reading the lists).
    pub fn seen(&self) -> u64 {
        self.seen.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The lists were read after `seen` changes.
    pub fn read_after(&self, seen: u64) {
        self.done.send_modify(|d| *d = (*d).max(seen));
    }

    /// Wait until the lists were read after every change announced so far, at most
    /// [`Self::BOUND`].
    pub async fn settled(&self) {
        let want = self.seen();
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(Self::BOUND, done.wait_for(|d| *d >= want)).await;
    }
}

/// Where each running call's progress notifications go, by progress token.
#[derive(Clone, Default)]
pub(super) struct ProgressRoutes(Arc<Mutex<HashMap<String, ProgressSender>>>);

impl ProgressRoutes {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ProgressSender>> {
        // A poisoned map is still a map: a panic elsewhere loses no route.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Removes a call's route when the call ends, however it ends.
pub(super) struct Route<'a>(pub(super) &'a ProgressRoutes, pub(super) String);

impl Drop for Route<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
    }
}

/// cairn's side of a session.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) routes: ProgressRoutes,
    /// The session's working directories, as `file://` roots.
    roots: Arc<Vec<PathBuf>>,
    notices: UnboundedSender<Notice>,
    pub(super) sync: Arc<ListSync>,
}

impl Handler {
    pub(super) fn new(roots: Vec<PathBuf>, notices: UnboundedSender<Notice>) -> Handler {
        Handler {
            routes: ProgressRoutes::default(),
            roots: Arc::new(roots),
            notices,
            sync: Arc::default(),
        }
    }

    fn lists_changed(&self) {
        self.sync.announced();
        let _ = self.notices.send(Notice::ListsChanged);
    }
}

/// `file://` and the path, each byte outside the unreserved set and `/` percent-encoded.
pub fn file_uri(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl rmcp::ClientHandler for Handler {
    #[allow(deprecated)]
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities.roots = Some(RootsCapabilities::default());
        info.client_info.name = "cairn".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .roots
            .iter()
            .map(|dir| {
                let mut root = Root::new(file_uri(dir));
                root.name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                root
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists_changed();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists_changed();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists_changed();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let key = token_key(&params.progress_token);
        let Some(sender) = self.routes.lock().get(&key).cloned() else {
            return;
        };
        let mut line = match params.total {
            Some(total) => format!("{}/{}", params.progress, total),
            None => format!("{}", params.progress),
        };
        if let Some(m) = params.message {
            line = format!("{} ({line})", m.chars().take(200).collect::<String>());
        }
        sender.output(line);
    }
}

pub(super) fn token_key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

/// A transport whose end is announced: when it yields no more messages, [`Notice::Closed`].
pub(super) struct Watched<T> {
    inner: T,
    notices: UnboundedSender<Notice>,
}

impl<T> Watched<T> {
    pub(super) fn new(inner: T, notices: UnboundedSender<Notice>) -> Watched<T> {
        Watched { inner, notices }
    }
}

impl<T> rmcp::transport::Transport<RoleClient> for Watched<T>
where
    T: rmcp::transport::Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if message.is_none() {
            let _ = self.notices.send(Notice::Closed);
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn roots_are_file_uris_with_odd_bytes_escaped() {
        let uri = super::file_uri(std::path::Path::new("/tmp/my proj/ü#"));
        assert_eq!(uri, "file:///tmp/my%20proj/%C3%BC%23");
    }
}
