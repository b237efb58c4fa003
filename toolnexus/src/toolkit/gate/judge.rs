//! The toolkit's last word on an approved gate, wherever the approval came from: an edit is
//! judged as the call it becomes, and with a receipt verifier a ruled approval must be
//! signed. The loop and [`Toolkit::settle`](crate::Toolkit::settle) ask it before a gated
//! call runs, so no host can run a call its approval does not cover.

use std::sync::Arc;

use serde_json::Value;

use crate::receipt::{check_approval, VerifyReceipt};
use crate::toolkit::{Toolkit, ToolkitBuilder};
use crate::{call_digest, Answer, Request};

impl ToolkitBuilder {
    /// Runs a gated call whose approval names responders or a quorum only under receipts
    /// `verifier` accepts (say, the inbox's `PublicKey`): signed, from enough distinct
    /// people, binding that request and that call as it runs, and final
    /// ([`check_approval`]). Whatever door an approval came through — a protocol's own
    /// elicitation, an engine's update, a hand-written resume — one that is not signed so
    /// is refused and the call does not run.
    pub fn verify_receipts(mut self, verifier: impl VerifyReceipt) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }
}

impl Toolkit {
    /// Whether `answer` lets the gated call of `name` that proposed `proposed`, asked with
    /// `request`, run. A refusal always may (nothing runs). An approval with edited
    /// arguments is judged as the call it becomes: when the toolkit's gate for the edited
    /// call would ask more people, or other ones, than `request` did, this approval does
    /// not cover it. With [`verify_receipts`](ToolkitBuilder::verify_receipts), a ruled
    /// approval must carry receipts for the call as it runs ([`check_approval`]).
    ///
    /// `Err` says why, for the model to read in the call's result.
    ///
    /// ```
    /// use serde_json::{json, Value};
    /// use toolnexus::{Answer, Approval, NativeTool, Toolkit};
    ///
    /// let pay = NativeTool::of("pay", "Pays",
    ///     json!({"type": "object", "properties": {"cents": {"type": "integer"}}}),
    ///     |_args, _ctx| async { "paid" });
    /// let big = |args: &Value| args["cents"].as_i64().unwrap_or(i64::MAX) > 500_000;
    /// let tk = Toolkit::builder()
    ///     .tool(pay)
    ///     .approval(Approval::tools(["pay"]).when(big).responders(["group:finance"]).quorum(2))
    ///     .approval(Approval::tools(["pay"]).responders(["group:finance"]))
    ///     .build()
    ///     .unwrap();
    /// let small = json!({"cents": 60_000});
    /// let asked = tk.approval_request("pay", &small, "run/call").unwrap();
    /// assert_eq!(asked.quorum(), 1);
    /// // One approver turning 60,000 into 5,000,000 would need two.
    /// let raised = Answer::ok(&asked.id).with_args(json!({"cents": 5_000_000}));
    /// assert!(tk.judge_approval("pay", &asked, &raised, &small).is_err());
    /// let lowered = Answer::ok(&asked.id).with_args(json!({"cents": 50_000}));
    /// assert!(tk.judge_approval("pay", &asked, &lowered, &small).is_ok());
    /// ```
    pub fn judge_approval(
        &self,
        name: &str,
        request: &Request,
        answer: &Answer,
        proposed: &Value,
    ) -> Result<(), String> {
        if !answer.ok {
            return Ok(());
        }
        let asked = request.rule().map_err(|e| e.to_string())?;
        let edited = answer.args.as_ref().filter(|args| *args != proposed);
        if let Some(edited) = edited {
            let regated = self.approval_request(name, edited, &request.id);
            if let Some(regated) = regated {
                let needs = regated.rule().map_err(|e| e.to_string())?;
                let more = needs.quorum > asked.quorum;
                let others = needs.responders.is_some() && needs.responders != asked.responders;
                if more || others {
                    let who = needs
                        .responders
                        .as_ref()
                        .map_or_else(|| "anyone".to_owned(), |list| list.join(", "));
                    return Err(format!(
                        "the edited call needs an approval of its own, by {} of {who}; \
                         this one covers the call as it was proposed",
                        needs.quorum
                    ));
                }
            }
        }
        let Some(verifier) = &self.inner.verifier else {
            return Ok(());
        };
        let runs_with = edited.unwrap_or(proposed);
        let call = call_digest(name, runs_with);
        check_approval(request, answer, &call, verifier.as_ref()).map_err(|e| e.to_string())
    }
}

impl Toolkit {
    /// What a call that waited on `requests` comes to when its gate's approval in `answers`
    /// does not cover it ([`judge_approval`](Self::judge_approval)): a failure the model
    /// reads, the call not run. `None` when it does, or the call waited on no gate.
    pub(crate) fn refused_approval(
        &self,
        name: &str,
        requests: &[Request],
        answers: &[Answer],
        args: &Value,
    ) -> Option<crate::ToolOutcome> {
        let [request] = requests else {
            return None;
        };
        request.gated_tool()?;
        let answer = answers.iter().find(|a| a.id == request.id)?;
        let why = self.judge_approval(name, request, answer, args).err()?;
        tracing::warn!(tool = name, request = %request.id, "{why}");
        Some(crate::ToolOutcome::failure(format!(
            "unresolved: {} ({why})",
            request.prompt
        )))
    }
}
