//! One request of a turn: what goes with it (the window kept, late MCP tools, deferred-tool
//! notes, reminders), streaming the answer while its tool calls start in the executor,
//! retries that drop an attempt nobody acted on, the partial answer kept in the transcript,
//! and the [`Step`] the turn takes next (done, tools ran, again, failed, interrupted).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::{Core, Step};
use crate::agent::executor::Executor;
use crate::llm::retry::stream_with_retry;
use crate::llm::{ContentBlock, Message, ModelRequest, Role, StreamEvent};
use crate::protocol::{Event, Usage};
use crate::session::transcript::Record;

/// While an answer streams, its text so far is written to the transcript at most this often
/// (and at each finished block), so a crash loses little.
const PARTIAL_EVERY: Duration = Duration::from_secs(1);

impl Core {
    /// One request to the model and the tool calls of its answer.
    pub(in crate::agent) async fn one_request(&mut self, cancel: &CancellationToken) -> Step {
        // Mid-turn (tool results just came back) the window is checked here; a new prompt is
        // checked before it is added, so it follows the summary instead of being folded in.
        if self.conversation.after_tools() {
            self.keep_within_window(cancel).await;
        }
        // MCP tools that joined since the last request (servers connect in the background),
        // which of them are deferred, and a word to the model about deferred tools that came
        // or went.
        let model = self.request_model();
        if let Some(note) = self.tools.refresh(&model) {
            self.session.remind(note);
        }
        for told in self.session.take_diagnostics_told() {
            self.conversation.record_diagnostics(told);
        }
        for (call_id, display) in self.session.take_shown_later() {
            self.conversation.record_shown(call_id, display, None);
        }
        let reminders = self.session.take_reminders();
        if !reminders.is_empty() {
            let blocks = reminders
                .into_iter()
                .map(|r| ContentBlock::Text {
                    text: format!("<system-reminder>\n{r}\n</system-reminder>"),
                })
                .collect();
            self.push_user(blocks);
        }
        self.count_subagent_usage();
        let request = ModelRequest {
            model: model.clone(),
            system: self.system.clone(),
            messages: self
                .tools
                .deferral
                .shape_messages(&self.conversation.messages),
            tools: self.tools.specs(&self.conversation.messages),
            max_tokens: self.services.settings.max_tokens,
            thinking_budget: None,
            reasoning_effort: self.effort,
            server_tools: Vec::new(),
        };
        let events = self.events().clone();
        // Retries (a failed send, a stream that breaks or is cut short) come inside the stream
        // as `Restart`s: the attempt so far is dropped and the request made again.
        let mut stream = stream_with_retry(
            Arc::clone(&self.services.client),
            request,
            self.services.settings.retry.clone(),
        );

        // Tools get their own token so a broken stream can stop them without ending the turn's.
        let tools_cancel = cancel.child_token();
        let mut executor = Executor::new(self.call_env(tools_cancel.clone()));
        let mut blocks: Vec<ContentBlock> = Vec::new();
        let mut partial_text = String::new();
        let mut usage = Usage::default();
        let mut finished = false;
        let mut stream_error: Option<String> = None;
        // Text or thinking of the current attempt has reached the client.
        let mut shown = false;
        // The stream broke after a tool call of this attempt was handed to the executor.
        let mut broke_after_tools: Option<String> = None;
        let mut last_partial = Instant::now();
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                ev = stream.next() => match ev {
                    None => {
                        if !finished {
                            stream_error =
                                Some("the stream ended before the message was complete".into());
                        }
                        break;
                    }
                    Some(Err(e)) => {
                        stream_error = Some(e.to_string());
                        break;
                    }
                    Some(Ok(ev)) => match ev {
                        StreamEvent::Restart(notice) => {
                            if !executor.is_empty() {
                                // A tool call of this attempt may be running or asking the
                                // person: retrying would run it twice or from an answer
                                // that is being thrown away. Keep this attempt instead.
                                broke_after_tools = Some(notice.error.to_string());
                                break;
                            }
                            // Nothing of the attempt is kept: the next one answers afresh.
                            self.record_usage(&model, &usage);
                            usage = Usage::default();
                            blocks.clear();
                            partial_text.clear();
                            events.send(Event::Retrying {
                                attempt: notice.attempt,
                                max_attempts: notice.max_attempts,
                                delay_ms: u64::try_from(notice.delay.as_millis())
                                    .unwrap_or(u64::MAX),
                                reason: notice.error.to_string(),
                                discarded: std::mem::take(&mut shown),
                            });
                        }
                        StreamEvent::TextDelta(text) => {
                            shown = true;
                            partial_text.push_str(&text);
                            events.send(Event::TextDelta { text });
                            if last_partial.elapsed() >= PARTIAL_EVERY {
                                last_partial = Instant::now();
                                let mut so_far = blocks.clone();
                                so_far.push(ContentBlock::Text { text: partial_text.clone() });
                                self.conversation
                                    .transcript
                                    .record(&Record::Partial { blocks: so_far });
                            }
                        }
                        StreamEvent::ThinkingDelta(text) => {
                            shown = true;
                            events.send(Event::ThinkingDelta { text });
                        }
                        StreamEvent::BlockComplete(block) => {
                            match &block {
                                ContentBlock::Text { .. } => partial_text.clear(),
                                ContentBlock::ToolUse { id, name, input } => {
                                    executor.submit(id.clone(), name.clone(), input.clone());
                                }
                                ContentBlock::Server(server) => {
                                    if let Some(event) =
                                        crate::tools::web_search::provider::block_event(server)
                                    {
                                        events.send(event);
                                    }
                                }
                                _ => {}
                            }
                            blocks.push(block);
                            // A crash from here on resumes with what the answer had.
                            last_partial = Instant::now();
                            self.conversation
                                .transcript
                                .record(&Record::Partial { blocks: blocks.clone() });
                        }
                        StreamEvent::InvalidToolUse { id, name, raw_input, error } => {
                            blocks.push(ContentBlock::ToolUse {
                                id: id.clone(),
                                name: name.clone(),
                                input: serde_json::json!({}),
                            });
                            executor.submit_invalid(id, name, raw_input, error);
                        }
                        StreamEvent::Usage(u) => usage = u,
                        StreamEvent::Finished(_) => finished = true,
                    },
                },
                () = executor.next_finished() => {}
            }
        }
        drop(stream);
        self.record_usage(&model, &usage);

        let interrupted = cancel.is_cancelled();
        let incomplete = interrupted || stream_error.is_some() || broke_after_tools.is_some();
        if incomplete && !partial_text.is_empty() {
            blocks.push(ContentBlock::Text { text: partial_text });
        }
        if stream_error.is_some() {
            tools_cancel.cancel();
        }
        let has_tools = !executor.is_empty();
        let answered = !blocks.is_empty() || has_tools;
        let text: String = blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if !blocks.is_empty() {
            self.events().send(Event::AssistantMessage {
                content: serde_json::to_value(&blocks).unwrap_or_default(),
                incomplete,
            });
            self.push_message(Message {
                role: Role::Assistant,
                content: blocks,
            });
        }
        if has_tools {
            let shown = executor.shown();
            let results = executor.finish().await;
            let shown = std::mem::take(&mut *shown.lock().unwrap_or_else(|e| e.into_inner()));
            for (call_id, display, outcome) in shown {
                self.conversation.record_shown(call_id, display, outcome);
            }
            self.events().send(Event::ToolResults {
                content: serde_json::to_value(&results).unwrap_or_default(),
            });
            self.push_user(results);
        }
        if interrupted {
            return Step::Interrupted;
        }
        if let Some(e) = broke_after_tools {
            self.events().send(Event::Notice {
                message: format!(
                    "The response broke off after a tool call had started ({e}); the tool \
                     results go back to the model, which carries on from there."
                ),
            });
            self.session.remind(format!(
                "Your previous response was cut off by a connection problem ({e}) after its \
                 tool calls had started; anything after them was lost. Their results are \
                 above: carry on from there."
            ));
            return Step::ToolsRan;
        }
        if let Some(e) = stream_error {
            if !answered
                && self.tools.deferral.references
                && crate::agent::deferral::is_reference_error(&e)
            {
                self.tools.deferral.references = false;
                self.events().send(Event::Notice {
                    message: format!(
                        "The model server refused deferred tools ({e}); from now on loaded \
                         tools are sent whole."
                    ),
                });
                return Step::Again;
            }
            if !answered {
                // Nothing of an answer arrived (a refused key, retries exhausted before any
                // text): the error is the whole story.
                return Step::Failed(e);
            }
            let kept = if text.is_empty() {
                String::new()
            } else {
                " The partial answer is kept, marked incomplete.".to_string()
            };
            return Step::Failed(format!("The response broke off: {e}.{kept}"));
        }
        if has_tools {
            Step::ToolsRan
        } else {
            Step::Done(text)
        }
    }
}
