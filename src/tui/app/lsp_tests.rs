//! The language servers in the TUI: asked of the host at start, their states in the status
//! row, `/lsp` (list, restart) and `/diagnostics`.

use std::path::PathBuf;

use crate::protocol::{
    Event, FileDiagnostics, HostEvent, HostOp, LspServerInfo, LspState, Op, PermissionMode,
};
use crate::tui::app::tests::{Harness, session};
use crate::tui::input::Key;
use crate::tui::render::tests::screen;

fn server(name: &str, root: Option<&str>, state: LspState) -> LspServerInfo {
    LspServerInfo {
        name: name.into(),
        root: root.map(PathBuf::from),
        state,
        log: PathBuf::from(format!("/data/lsp/{name}.log")),
        extensions: vec![".x".into()],
    }
}

#[test]
fn language_servers_show_in_the_status_row_and_lsp_and_diagnostics_list_them() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.app.watch_lsp();
    assert_eq!(h.sent(), [Op::Host(HostOp::LspServers)]);
    let cwd = h.app.session.cwd.display().to_string();
    h.event(Event::Host(HostEvent::LspServers {
        servers: vec![
            server("clangd", None, LspState::NotStarted),
            server("pyright", Some(&cwd), LspState::Ready),
            server(
                "tsserver",
                Some(&cwd),
                LspState::Failed {
                    error: "language server `tsserver` failed to initialise".into(),
                },
            ),
        ],
    }));
    let row = screen(&mut h, 100, 8, 0);
    assert!(
        row.contains("LSP pyright ready tsserver failed · /lsp"),
        "{row}"
    );
    assert!(!row.contains("clangd"), "{row}");

    h.type_text("/lsp");
    h.press(Key::Enter);
    insta::assert_snapshot!(screen(&mut h, 100, 16, 0));

    h.type_text("/lsp restart tsserver");
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [Op::Host(HostOp::LspRestart {
            name: "tsserver".into()
        })]
    );
    h.event(Event::Host(HostEvent::LspAnswer {
        result: Ok("tsserver stopped; the next call that needs it starts it afresh".into()),
    }));
    h.type_text("/diagnostics");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [Op::Host(HostOp::Diagnostics)]);
    h.event(Event::Host(HostEvent::Diagnostics {
        files: vec![FileDiagnostics {
            path: h.app.session.cwd.join("app.py"),
            server: "pyright".into(),
            lines: vec!["line 5:17 error: Argument of type \"int\" [reportArgumentType]".into()],
        }],
    }));
    let text = screen(&mut h, 100, 16, 0);
    assert!(
        text.contains("tsserver stopped; the next call that needs it starts it afresh"),
        "{text}"
    );
    assert!(text.contains("app.py (pyright)"), "{text}");
    assert!(
        text.contains("line 5:17 error: Argument of type \"int\" [reportArgumentType]"),
        "{text}"
    );
}
