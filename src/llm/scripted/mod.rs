//! The scripted model server. Placeholder; replaced by the model-clients work.

use std::net::SocketAddr;

pub struct Script;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(String);

impl Script {
    pub fn from_json(_s: &str) -> Result<Script, ScriptError> {
        Err(ScriptError("not built".into()))
    }
}

pub struct ScriptedServer {
    addr: SocketAddr,
}

impl ScriptedServer {
    pub async fn start(_script: Script) -> std::io::Result<ScriptedServer> {
        Err(std::io::Error::other("not built"))
    }
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

pub async fn serve_forever(_script: Script, _port: u16) -> std::io::Result<()> {
    Err(std::io::Error::other("not built"))
}
