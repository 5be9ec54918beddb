//! A call whose change conflicts with an outside change (its preview refused with the
//! conflict's facts, `tools::edit_conflict`): when the client can show it
//! ([`CallEnv::offers_overwrite`]), the person is asked what overwriting would lose and
//! chooses overwrite, re-read or abort; elsewhere the refusal stands as it is.

use super::permission::ask;
use super::{CallEnv, Checked, INTERRUPTED_MESSAGE};
use crate::permissions::conflict;
use crate::protocol::{CallOutcome, Decision};
use crate::tools::edit_conflict::{Choice, Resolution};
use crate::tools::{ToolContext, ToolError, ToolHandle};

/// The call's way on after `error`, its validation or preview error: the person's resolution
/// and the call's outcome when it runs, else the message the model gets and the outcome.
pub(super) async fn resolve(
    env: &CallEnv,
    tool: &ToolHandle,
    call: &mut Checked,
    ctx: &ToolContext,
    title: &str,
    error: ToolError,
) -> Result<(Resolution, CallOutcome), (String, Option<CallOutcome>)> {
    let Some(facts) = error.conflict.filter(|_| env.offers_overwrite) else {
        return Err((error.message, None));
    };
    let info = call.info(tool.as_ref(), &ctx.call_id, title);
    let request = conflict::request(&info, &facts.path, &facts.disk, &facts.ours);
    let Some((request, decision)) = ask(env, tool, call, request, ctx).await else {
        return Err((INTERRUPTED_MESSAGE.into(), None));
    };
    let effect = env.gate.apply_decision(&request, &decision);
    let choice = match decision {
        Decision::Overwrite if effect.allow => Choice::Overwrite,
        Decision::Reread if effect.allow => Choice::Reread,
        _ => {
            let message = effect
                .message
                .unwrap_or_else(|| conflict::aborted_message(&facts.path));
            return Err((message, Some(CallOutcome::Denied)));
        }
    };
    let resolution = Resolution {
        conflict: facts,
        choice,
    };
    Ok((resolution, effect.outcome))
}
