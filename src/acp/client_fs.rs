//! The editor's files over ACP: [`ClientFiles`] answered by the client's `fs/read_text_file`
//! and `fs/write_text_file`, so the model reads and edits the editor's buffers (unsaved
//! changes included) rather than the disk. Used only when the client offers both methods in
//! `initialize`: reading the buffer while writing the disk would leave the two apart. The
//! tools keep every guard (permission before any request, read-before-edit, the conflict
//! check against the buffer); this file only carries the text.
//!
//! The session's id is known only once the host has opened it, after the spec was handed
//! over: [`AcpFiles::bind`] sets it then, and a request before it (there is none: tools run
//! only once a prompt names the session) is refused. Requests are sent from the core's tool
//! tasks, never from a connection handler, so awaiting their answers cannot block the
//! connection; an editor that never answers fails the call after [`ANSWER_TIMEOUT`].

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use agent_client_protocol::{Client, ErrorCode};
use async_trait::async_trait;

use crate::files::client::{ClientFileError, ClientFiles};
use crate::host::SessionSpec;

/// How long the editor may take to answer one file request.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// One session's files, served by the client at the other end of `cx`.
#[derive(Debug)]
pub struct AcpFiles {
    cx: ConnectionTo<Client>,
    session_id: OnceLock<String>,
}

impl AcpFiles {
    /// The client's files when it offers both `fs/read_text_file` and `fs/write_text_file`.
    pub fn offered(caps: &ClientCapabilities, cx: &ConnectionTo<Client>) -> Option<Arc<AcpFiles>> {
        (caps.fs.read_text_file && caps.fs.write_text_file).then(|| {
            Arc::new(AcpFiles {
                cx: cx.clone(),
                session_id: OnceLock::new(),
            })
        })
    }

    /// The session the requests are about, once the host has given it its id.
    pub fn bind(&self, session_id: &str) {
        // Set once: a session keeps its id.
        let _ = self.session_id.set(session_id.to_string());
    }

    fn session(&self) -> Result<&str, ClientFileError> {
        self.session_id
            .get()
            .map(String::as_str)
            .ok_or_else(|| ClientFileError::Failed("the session is not open yet".into()))
    }
}

/// Give `spec` the client's files when the client offers them; the result is to be bound to
/// the session's id once it is open ([`AcpFiles::bind`]). The one call `session/new` and
/// `session/load` make.
pub fn attach(
    spec: &mut Result<SessionSpec, String>,
    caps: &ClientCapabilities,
    cx: &ConnectionTo<Client>,
) -> Option<Arc<AcpFiles>> {
    let spec = spec.as_mut().ok()?;
    let files = AcpFiles::offered(caps, cx)?;
    let served: Arc<dyn ClientFiles> = files.clone();
    spec.client_files = Some(served);
    Some(files)
}

/// The editor's error as the tools see it: "no such file" kept apart from the rest.
fn client_error(e: agent_client_protocol::Error) -> ClientFileError {
    if e.code == ErrorCode::RESOURCE_NOT_FOUND {
        ClientFileError::NotFound
    } else {
        ClientFileError::Failed(e.message)
    }
}

fn timed_out() -> ClientFileError {
    ClientFileError::Failed(format!(
        "the editor did not answer within {} s",
        ANSWER_TIMEOUT.as_secs()
    ))
}

#[async_trait]
impl ClientFiles for AcpFiles {
    async fn read_text(&self, path: &Path) -> Result<String, ClientFileError> {
        let request = ReadTextFileRequest::new(self.session()?.to_string(), path);
        let answer = self.cx.send_request(request).block_task();
        match tokio::time::timeout(ANSWER_TIMEOUT, answer).await {
            Ok(Ok(r)) => Ok(r.content),
            Ok(Err(e)) => Err(client_error(e)),
            Err(_) => Err(timed_out()),
        }
    }

    async fn write_text(&self, path: &Path, text: &str) -> Result<(), ClientFileError> {
        let request = WriteTextFileRequest::new(self.session()?.to_string(), path, text);
        let answer = self.cx.send_request(request).block_task();
        match tokio::time::timeout(ANSWER_TIMEOUT, answer).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(client_error(e)),
            Err(_) => Err(timed_out()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_told_from_other_failures() {
        let missing = agent_client_protocol::Error::new(ErrorCode::RESOURCE_NOT_FOUND, "gone");
        assert_eq!(client_error(missing), ClientFileError::NotFound);
        let other = agent_client_protocol::Error::new(ErrorCode::INTERNAL_ERROR, "disk full");
        assert_eq!(
            client_error(other),
            ClientFileError::Failed("disk full".into())
        );
    }
}
