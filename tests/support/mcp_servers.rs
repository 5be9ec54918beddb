//! Where the reference MCP servers from npm are (`.ci/run` installs them into
//! `target/mcp-servers`). Include with `#[path = "support/mcp_servers.rs"] mod mcp_servers;`.

#![allow(dead_code)]

use std::path::PathBuf;

/// `target/mcp-servers/node_modules/@modelcontextprotocol` (or under `$CAIRN_MCP_SERVERS`), or
/// None after saying loudly why; under `CI` a missing server fails the test.
pub fn servers_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("CAIRN_MCP_SERVERS").map(PathBuf::from),
        std::env::var_os("CARGO_TARGET_DIR").map(|t| PathBuf::from(t).join("mcp-servers")),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-servers")),
    ];
    for dir in candidates.into_iter().flatten() {
        let bin = dir.join("node_modules/@modelcontextprotocol");
        if bin.join("server-everything/dist/index.js").is_file() {
            return Some(bin);
        }
    }
    let msg = "the reference MCP servers are not installed: run `npm ci --prefix target/mcp-servers` \
               with tests/mcp-servers/package.json (as .ci/run does)";
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    eprintln!("\n!!!!!!!!!! SKIPPED: {msg} !!!!!!!!!!\n");
    None
}
