use super::*;
use rmcp::model::{JsonRpcMessage, NumberOrString};

fn scan(text: &str) -> Option<Value> {
    let mut s = IdScan::default();
    // Fed in pieces, as lines arrive.
    for chunk in text.as_bytes().chunks(3) {
        s.feed(chunk);
    }
    s.answered_id()
}

#[test]
fn the_id_is_found_wherever_it_is_and_requests_are_not_answers() {
    assert_eq!(
        scan(r#"{"jsonrpc":"2.0","id":7,"result":{"x":1}}"#),
        Some(json!(7))
    );
    assert_eq!(
        scan(r#"{"result":{"id":1,"content":[{"text":"a \"id\": 2, }"}]}, "id" : "r-9" }"#),
        Some(json!("r-9"))
    );
    assert_eq!(scan(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#), None);
    assert_eq!(
        scan(r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#),
        None
    );
    assert_eq!(scan(r#"{"id":{"deep":1},"result":{}}"#), None);
    assert_eq!(scan(r#"[{"id":1}]"#), None);
}

/// A transport reading what the test writes, with a limit of `max` bytes a message.
fn transport(
    max: usize,
) -> (
    LineTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>,
    tokio::io::DuplexStream,
) {
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    let (client_out, _server_in) = tokio::io::duplex(1 << 16);
    std::mem::forget(_server_in);
    (LineTransport::new(client_in, client_out, max), server_out)
}

fn error_of(message: RxJsonRpcMessage<RoleClient>) -> (NumberOrString, String) {
    match message {
        JsonRpcMessage::Error(e) => (e.id.unwrap(), e.error.message.to_string()),
        other => panic!("not an error answer: {other:?}"),
    }
}

#[tokio::test]
async fn an_oversized_answer_is_answered_at_once_and_the_next_message_still_reads() {
    let (mut t, mut server) = transport(1024);
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
        "x".repeat(5000)
    );
    let writer = tokio::spawn(async move {
        // An oversized notification is dropped; the oversized answer gets an error.
        let note = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"data\":\"{}\"}}}}\n",
            "y".repeat(3000)
        );
        server.write_all(note.as_bytes()).await.unwrap();
        server.write_all(big.as_bytes()).await.unwrap();
        server
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[]}}\n")
            .await
            .unwrap();
        // An answer that cannot be read: the call is told at once too.
        server
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"content\":[}\n")
            .await
            .unwrap();
        server
    });
    let (id, why) = error_of(t.receive().await.unwrap());
    assert_eq!(id, NumberOrString::Number(4));
    assert!(
        why.starts_with("the server's answer is 0.0 MiB, more than the 0.0 MiB cairn reads"),
        "{why}"
    );
    match t.receive().await.unwrap() {
        JsonRpcMessage::Response(r) => assert_eq!(r.id, NumberOrString::Number(5)),
        other => panic!("{other:?}"),
    }
    let (id, why) = error_of(t.receive().await.unwrap());
    assert_eq!(id, NumberOrString::Number(6));
    assert!(
        why.starts_with("the server's answer could not be read"),
        "{why}"
    );
    drop(writer.await.unwrap());
    assert!(
        t.receive().await.is_none(),
        "end of the stream ends the transport"
    );
}

#[test]
fn sizes_are_said_in_mib() {
    assert_eq!(
        oversized(70 << 20, MAX_MESSAGE_BYTES),
        "the server's answer is 70.0 MiB, more than the 64.0 MiB cairn reads of one message; \
         ask the tool for less (a smaller page, range or query)"
    );
}
