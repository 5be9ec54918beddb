//! A cairn [`PermissionRequest`] as an ACP `session/request_permission`, and the client's
//! answer back as a [`Decision`]. cairn's scopes become the options: allow once, allow for the
//! session (what `session_scope` names), always allow (the `saveable_rule`, saved to the
//! project's local settings), reject once, reject for the session. A plan to approve offers
//! the modes to go on in; a single one-choice question offers its answers. An answer the
//! request did not offer, or a cancelled one, is a refusal (fail closed).

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, ToolCallUpdate,
    ToolCallUpdateFields,
};

use crate::protocol::{Decision, PermissionMode, PermissionRequest, RequestKind};

use super::updates::{display_content, location_of};

/// One option offered, with the decision it stands for.
struct Choice {
    id: &'static str,
    name: String,
    kind: PermissionOptionKind,
    decision: Decision,
}

/// What the client is asked: the options it may pick from, and the tool call they are about.
pub struct Question {
    pub tool_call: ToolCallUpdate,
    pub options: Vec<PermissionOption>,
    choices: Vec<Choice>,
}

impl Question {
    /// The decision for the client's `outcome`.
    pub fn decision(&self, outcome: &RequestPermissionOutcome) -> Decision {
        let RequestPermissionOutcome::Selected(selected) = outcome else {
            return Decision::DenyOnce;
        };
        self.choices
            .iter()
            .find(|c| *c.id == *selected.option_id.0)
            .map_or(Decision::DenyOnce, |c| c.decision.clone())
    }
}

/// Option ids of the answers to a question (`answer-0`, …), fixed so they can be `&'static`.
const ANSWER_IDS: [&str; 4] = ["answer-0", "answer-1", "answer-2", "answer-3"];

/// The question for `request`; `cwd` resolves relative paths of its locations.
pub fn question(request: &PermissionRequest, cwd: &std::path::Path) -> Question {
    let choices = match &request.kind {
        RequestKind::Tool => tool_choices(request),
        RequestKind::PlanApproval { .. } => plan_choices(),
        // The core asks an editor no conflict question (it refuses the edit instead); should
        // one come, the only answer is to abort.
        RequestKind::Conflict { .. } => vec![reject_once()],
        RequestKind::Questions { questions } => match questions.as_slice() {
            [q] if !q.multi_select => {
                let mut choices: Vec<Choice> = q
                    .options
                    .iter()
                    .zip(ANSWER_IDS)
                    .map(|(o, id)| Choice {
                        id,
                        name: o.label.clone(),
                        kind: PermissionOptionKind::AllowOnce,
                        decision: Decision::Answers {
                            answers: vec![o.label.clone()],
                        },
                    })
                    .collect();
                choices.push(reject_once());
                choices
            }
            _ => vec![Choice {
                id: "decline",
                name: "Decline".into(),
                kind: PermissionOptionKind::RejectOnce,
                decision: Decision::DenyWithFeedback {
                    feedback: "The person's editor can answer one single-choice question at a \
                               time; ask these in your reply instead."
                        .into(),
                },
            }],
        },
    };
    let mut content = Vec::new();
    match &request.kind {
        RequestKind::PlanApproval { plan } => content.push(super::updates::text_content(plan)),
        RequestKind::Questions { questions } => {
            let text: Vec<String> = questions.iter().map(|q| q.question.clone()).collect();
            content.push(super::updates::text_content(&text.join("\n")));
        }
        RequestKind::Tool | RequestKind::Conflict { .. } => {}
    }
    if let Some(preview) = &request.preview {
        content.extend(display_content(preview));
    }
    let mut fields = ToolCallUpdateFields::new()
        .title(request.title.clone())
        .raw_input(request.input.clone());
    if !content.is_empty() {
        fields = fields.content(content);
    }
    if let Some(location) = location_of(&request.input, cwd) {
        fields = fields.locations(vec![location]);
    }
    Question {
        tool_call: ToolCallUpdate::new(request.call_id.clone(), fields),
        options: choices
            .iter()
            .map(|c| PermissionOption::new(c.id, c.name.clone(), c.kind))
            .collect(),
        choices,
    }
}

fn reject_once() -> Choice {
    Choice {
        id: "reject-once",
        name: "Reject".into(),
        kind: PermissionOptionKind::RejectOnce,
        decision: Decision::DenyOnce,
    }
}

fn tool_choices(request: &PermissionRequest) -> Vec<Choice> {
    let mut choices = vec![Choice {
        id: "allow-once",
        name: "Allow once".into(),
        kind: PermissionOptionKind::AllowOnce,
        decision: Decision::AllowOnce,
    }];
    if let Some(scope) = &request.session_scope {
        choices.push(Choice {
            id: "allow-session",
            name: format!("Allow for this session: {scope}"),
            kind: PermissionOptionKind::AllowAlways,
            decision: Decision::AllowSession,
        });
    }
    if let Some(rule) = &request.saveable_rule {
        choices.push(Choice {
            id: "allow-always",
            name: format!("Always allow {rule} (saved to .claude/settings.local.json)"),
            kind: PermissionOptionKind::AllowAlways,
            decision: Decision::AlwaysAllow,
        });
    }
    choices.push(reject_once());
    choices.push(Choice {
        id: "reject-session",
        name: "Reject for this session".into(),
        kind: PermissionOptionKind::RejectAlways,
        decision: Decision::DenySession,
    });
    choices
}

fn plan_choices() -> Vec<Choice> {
    vec![
        Choice {
            id: "plan-accept-edits",
            name: "Approve the plan, accept edits".into(),
            kind: PermissionOptionKind::AllowAlways,
            decision: Decision::ApprovePlan {
                mode: PermissionMode::AcceptEdits,
            },
        },
        Choice {
            id: "plan-default",
            name: "Approve the plan, ask before edits".into(),
            kind: PermissionOptionKind::AllowOnce,
            decision: Decision::ApprovePlan {
                mode: PermissionMode::Default,
            },
        },
        Choice {
            id: "plan-keep-planning",
            name: "Keep planning".into(),
            kind: PermissionOptionKind::RejectOnce,
            decision: Decision::DenyOnce,
        },
    ]
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;
    use serde_json::json;

    use super::*;
    use crate::protocol::{Display, QuestionOption};

    fn request(kind: RequestKind) -> PermissionRequest {
        PermissionRequest {
            id: 7,
            call_id: "toolu_1".into(),
            tool: "Edit".into(),
            title: "Edit src/a.txt".into(),
            input: json!({"file_path": "src/a.txt"}),
            reason: "edits ask".into(),
            preview: Some(Display::Diff {
                path: "/w/src/a.txt".into(),
                before: "old\n".into(),
                after: "new\n".into(),
            }),
            session_scope: Some("edits to src/a.txt".into()),
            saveable_rule: Some("Edit(src/a.txt)".into()),
            background_task: None,
            kind,
        }
    }

    fn pick(q: &Question, id: &str) -> Decision {
        q.decision(&RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(id.to_string()),
        ))
    }

    #[test]
    fn a_tool_call_offers_cairns_scopes_and_maps_each_back() {
        let q = question(&request(RequestKind::Tool), std::path::Path::new("/w"));
        let offered: Vec<(String, PermissionOptionKind)> = q
            .options
            .iter()
            .map(|o| (o.option_id.0.to_string(), o.kind))
            .collect();
        assert_eq!(
            offered,
            [
                ("allow-once".to_string(), PermissionOptionKind::AllowOnce),
                ("allow-session".into(), PermissionOptionKind::AllowAlways),
                ("allow-always".into(), PermissionOptionKind::AllowAlways),
                ("reject-once".into(), PermissionOptionKind::RejectOnce),
                ("reject-session".into(), PermissionOptionKind::RejectAlways),
            ]
        );
        assert_eq!(pick(&q, "allow-once"), Decision::AllowOnce);
        assert_eq!(pick(&q, "allow-session"), Decision::AllowSession);
        assert_eq!(pick(&q, "allow-always"), Decision::AlwaysAllow);
        assert_eq!(pick(&q, "reject-once"), Decision::DenyOnce);
        assert_eq!(pick(&q, "reject-session"), Decision::DenySession);
        // What was not offered, and a cancelled request, refuse.
        assert_eq!(pick(&q, "plan-accept-edits"), Decision::DenyOnce);
        assert_eq!(
            q.decision(&RequestPermissionOutcome::Cancelled),
            Decision::DenyOnce
        );
        // The client sees the diff and where it is.
        let json = serde_json::to_value(&q.tool_call).unwrap_or_default();
        assert_eq!(json["toolCallId"], "toolu_1");
        assert_eq!(json["content"][0]["type"], "diff");
        assert_eq!(json["content"][0]["oldText"], "old\n");
        assert_eq!(json["content"][0]["newText"], "new\n");
        assert_eq!(json["locations"][0]["path"], "/w/src/a.txt");
    }

    #[test]
    fn without_a_rule_or_scope_only_once_answers_are_offered_for_allowing() {
        let mut r = request(RequestKind::Tool);
        r.session_scope = None;
        r.saveable_rule = None;
        let q = question(&r, std::path::Path::new("/w"));
        let ids: Vec<&str> = q.options.iter().map(|o| &*o.option_id.0).collect();
        assert_eq!(ids, ["allow-once", "reject-once", "reject-session"]);
        assert_eq!(pick(&q, "allow-always"), Decision::DenyOnce);
    }

    #[test]
    fn a_plan_offers_the_modes_to_go_on_in() {
        let q = question(
            &request(RequestKind::PlanApproval {
                plan: "1. do it".into(),
            }),
            std::path::Path::new("/w"),
        );
        assert_eq!(
            pick(&q, "plan-accept-edits"),
            Decision::ApprovePlan {
                mode: PermissionMode::AcceptEdits
            }
        );
        assert_eq!(pick(&q, "plan-keep-planning"), Decision::DenyOnce);
    }

    #[test]
    fn one_single_choice_question_offers_its_answers() {
        let questions = vec![crate::protocol::Question {
            question: "Which?".into(),
            header: "Pick".into(),
            options: vec![
                QuestionOption {
                    label: "Red".into(),
                    description: String::new(),
                },
                QuestionOption {
                    label: "Blue".into(),
                    description: String::new(),
                },
            ],
            multi_select: false,
        }];
        let q = question(
            &request(RequestKind::Questions { questions }),
            std::path::Path::new("/w"),
        );
        assert_eq!(
            pick(&q, "answer-1"),
            Decision::Answers {
                answers: vec!["Blue".into()]
            }
        );
        assert_eq!(pick(&q, "reject-once"), Decision::DenyOnce);
    }
}
