//! The run at its wait: the requests it waits on, the answers it takes there (each judged,
//! each once), and the requests it declines as expired. Apart from the workflow's handlers
//! because this is plain state, decided without Temporal, and tested so.

use std::time::SystemTime;

use toolnexus::{check_answers, Answer, AnswerSetError, Refusal, Request, RunResult};

use super::AgentRun;
use crate::door;
use crate::refusal::{AnswerRefusal, Refused};
use crate::wire::AnswerInput;

impl AgentRun {
    pub(super) fn open(&self) -> Vec<Request> {
        self.waiting
            .iter()
            .filter(|r| !self.answered.contains(&r.id))
            .cloned()
            .collect()
    }

    /// Takes `answer` if it answers a request that waits, and fits it.
    pub(super) fn take(&mut self, answer: Answer) -> Result<Vec<Request>, Refused> {
        if self.answered.contains(&answer.id) {
            return Err(already_answered(&answer.id));
        }
        if self.ended {
            return Err(Refused::new(
                AnswerRefusal::Ended,
                format!("no request `{}` waits: the run has ended", answer.id),
            ));
        }
        let open = self.open();
        check_answers(&open, std::slice::from_ref(&answer)).map_err(|e| match e {
            AnswerSetError::Unknown { id, .. } if open.is_empty() => Refused::new(
                AnswerRefusal::Unfit,
                format!("no request `{id}` waits: nothing does"),
            ),
            other => Refused::new(AnswerRefusal::Unfit, other.to_string()),
        })?;
        self.judge(&open, &answer)?;
        self.answered.insert(answer.id.clone());
        let id = answer.id.clone();
        self.answers.push(answer);
        Ok(open.into_iter().filter(|r| r.id != id).collect())
    }

    /// What the `answer` update's validator checks: what needs no wait, and at the wait
    /// whether the run would trust the answer.
    pub(super) fn admit(&self, input: &AnswerInput) -> Result<(), Refused> {
        let answer = parse_answer(input)?;
        if self.answered.contains(&answer.id) {
            return Err(already_answered(&answer.id));
        }
        if self.at_wait {
            self.judge(&self.open(), &answer)?;
        }
        Ok(())
    }

    /// Whether the run would trust `answer` to the request of `open` it names ([`door`]);
    /// an answer to none of them is not this judgement's to refuse.
    fn judge(&self, open: &[Request], answer: &Answer) -> Result<(), Refused> {
        let Some(request) = open.iter().find(|r| r.id == answer.id) else {
            return Ok(());
        };
        let messages = self.halted.as_ref().map_or(&[][..], |h| &h.messages[..]);
        door::judge(self.agent.toolkit(), messages, request, answer)
            .map_err(|why| Refused::new(AnswerRefusal::Untrusted, why))
    }

    pub(super) fn halt_result(&self) -> Option<RunResult> {
        let halted = self.halted.as_ref()?;
        if halted.waiting.is_empty() {
            return None;
        }
        Some(RunResult::halted(
            halted.messages.clone(),
            halted.waiting.clone(),
            self.agent.client().model(),
        ))
    }

    /// Declines, as expired, every open request whose `expiresAt` is at or before `now`;
    /// returns the next deadline still ahead. A request whose `expiresAt` is no date
    /// ([`Request::expiry`]) is declined at once, saying why: it was meant to expire, and
    /// no timer could be set for it (the inbox refuses to park it for the same reason).
    pub(super) fn expire(&mut self, now: SystemTime) -> Option<SystemTime> {
        let mut next: Option<SystemTime> = None;
        for request in self.open() {
            let at = match request.expiry() {
                Ok(Some(at)) => at,
                Ok(None) => continue,
                Err(unreadable) => {
                    self.answered.insert(request.id.clone());
                    self.answers.push(
                        Answer::refuse(&request.id, Refusal::Expired)
                            .with_note(unreadable.to_string()),
                    );
                    continue;
                }
            };
            if at <= now {
                self.answered.insert(request.id.clone());
                self.answers
                    .push(Answer::refuse(&request.id, Refusal::Expired));
            } else if next.is_none_or(|n| at < n) {
                next = Some(at);
            }
        }
        next
    }
}

/// The answer `input` holds, if it may be read at all.
pub(super) fn parse_answer(input: &AnswerInput) -> Result<Answer, Refused> {
    let sent = input
        .trusted()
        .map_err(|why| Refused::new(AnswerRefusal::Unencrypted, why))?;
    let answer: Answer = serde_json::from_value(sent.clone()).map_err(|e| {
        Refused::new(
            AnswerRefusal::Malformed,
            format!(
                "not an answer ({e}): send {{\"id\": REQUEST, \"ok\": true|false, \"reason\"?, \"data\"?}}"
            ),
        )
    })?;
    if answer.id.is_empty() {
        return Err(Refused::new(
            AnswerRefusal::Malformed,
            "the answer names no request: its `id` is empty",
        ));
    }
    Ok(answer)
}

/// The refusal of a second answer to request `id`, whenever it comes.
pub(super) fn already_answered(id: &str) -> Refused {
    Refused::new(
        AnswerRefusal::AlreadyAnswered,
        format!("request `{id}` is already answered"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;
    use crate::wire::Halted;
    use serde_json::{json, Value};
    use toolnexus::receipt::{Receipt, ReceiptAnswer, Statement, VerifyReceipt};
    use toolnexus::{call_digest, Approval, LlmClient, Message, NativeTool, Toolkit};

    fn waiting_on(requests: Vec<Request>) -> AgentRun {
        waiting_in(Toolkit::builder().build().unwrap(), requests, Vec::new())
    }

    fn waiting_in(tk: Toolkit, requests: Vec<Request>, messages: Vec<Message>) -> AgentRun {
        let client = LlmClient::builder()
            .base_url("http://127.0.0.1:9/v1")
            .model("m")
            .api_key("k")
            .build()
            .unwrap();
        let mut run = AgentRun::new(Agent::new(client, tk));
        run.halted = Some(Halted {
            messages,
            waiting: requests.clone(),
        });
        run.waiting = requests;
        run.at_wait = true;
        run
    }

    /// Trusts the receipts whose signature is its text: the key of these tests.
    struct Trusts(&'static str);
    impl VerifyReceipt for Trusts {
        fn verify_signature(&self, receipt: &Receipt) -> Result<(), String> {
            (receipt.signature == self.0)
                .then_some(())
                .ok_or_else(|| format!("not signed `{}`", self.0))
        }
    }

    /// A payment gated for two of finance, halted on its gate; the gate's request.
    fn halted_payment(verifies: bool) -> (AgentRun, Request) {
        let pay = NativeTool::of(
            "pay",
            "Pays",
            json!({"type": "object", "properties": {"cents": {"type": "integer"}}}),
            |_args, _ctx| async { "paid" },
        );
        let mut tk = Toolkit::builder().tool(pay).approval(
            Approval::tools(["pay"])
                .responders(["group:finance"])
                .quorum(2),
        );
        if verifies {
            tk = tk.verify_receipts(Trusts(SIGNED));
        }
        let tk = tk.build().unwrap();
        let args = json!({"cents": 900_000});
        let gate = tk.approval_request("pay", &args, "run/c1").unwrap();
        let messages: Vec<Message> = serde_json::from_value(json!([
            {"role": "user", "content": "pay"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": "pay", "args": args}]},
            {"role": "tool_results", "results": [
                {"call_id": "c1", "name": "pay", "output": gate.prompt, "pending": gate}
            ]}
        ]))
        .unwrap();
        (waiting_in(tk, vec![gate.clone()], messages), gate)
    }

    /// What `Trusts(SIGNED)` accepts.
    const SIGNED: &str = "signed";

    /// `by`'s approval of `gate` to pay with `args`, signed; the last of a quorum's votes
    /// settles it.
    fn vote(gate: &Request, by: &str, args: &Value, last: bool) -> Receipt {
        let approved = ReceiptAnswer::of(&Answer::ok(&gate.id));
        let at = "2026-01-01T00:00:00.000Z";
        let statement = Statement::new(
            &*gate.id,
            "run",
            call_digest("pay", args),
            approved,
            by,
            at,
            "group:finance",
        );
        let statement = statement.quorum(2);
        let statement = if last { statement } else { statement.partial() };
        Receipt::new(statement, "ed25519:test", SIGNED)
    }

    fn form() -> Request {
        Request::new("input", "Where to?").with_id("r2").with_data(json!({
            "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        }))
    }

    #[test]
    fn an_answer_is_taken_once_and_what_still_waits_is_returned() {
        let mut run = waiting_on(vec![Request::new("approval", "Buy?").with_id("r1"), form()]);
        let still = run.take(Answer::ok("r1")).unwrap();
        assert_eq!(
            still.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["r2"]
        );
        assert_eq!(run.open().len(), 1);
        let again = run
            .take(Answer::decline("r1", "no"))
            .unwrap_err()
            .to_string();
        assert!(again.contains("already answered"), "{again}");
        assert_eq!(run.answers.len(), 1);
    }

    #[test]
    fn an_unknown_or_misfit_answer_changes_nothing() {
        let mut run = waiting_on(vec![form()]);
        let unknown = run.take(Answer::ok("r9")).unwrap_err().to_string();
        assert!(
            unknown.contains("r9") && unknown.contains("r2"),
            "{unknown}"
        );
        let misfit = run
            .take(Answer::ok("r2").with_data(json!({"city": 5})))
            .unwrap_err()
            .to_string();
        assert!(misfit.contains("r2"), "{misfit}");
        assert!(run.answers.is_empty() && run.answered.is_empty());
        assert!(run
            .take(Answer::ok("r2").with_data(json!({"city": "Oslo"})))
            .is_ok());
    }

    #[test]
    fn nothing_is_taken_once_the_run_has_ended() {
        let mut run = waiting_on(Vec::new());
        run.ended = true;
        let ended = run.take(Answer::ok("r1")).unwrap_err().to_string();
        assert!(ended.contains("ended"), "{ended}");
    }

    #[test]
    fn a_request_past_its_expiry_is_declined_as_expired_and_the_next_deadline_is_kept() {
        let soon = Request::new("approval", "Buy?")
            .with_id("r1")
            .with_expires_at("2030-01-01T00:00:10Z");
        let later = Request::new("approval", "Ship?")
            .with_id("r2")
            .with_expires_at("2030-01-01T00:01:00Z");
        let never = Request::new("approval", "Keep?").with_id("r3");
        let mut run = waiting_on(vec![soon, later, never]);
        let at = |text: &str| {
            let request = Request::new("input", "When?").with_expires_at(text);
            request.expiry().unwrap().unwrap()
        };
        assert_eq!(
            run.expire(at("2030-01-01T00:00:05Z")),
            Some(at("2030-01-01T00:00:10Z"))
        );
        assert!(run.answers.is_empty());
        assert_eq!(
            run.expire(at("2030-01-01T00:00:10Z")),
            Some(at("2030-01-01T00:01:00Z"))
        );
        assert_eq!(run.answers.len(), 1);
        assert_eq!(run.answers[0].id, "r1");
        assert_eq!(run.answers[0].refusal(), Some(&Refusal::Expired));
        // Expired, it is answered: a person's late answer is refused.
        assert!(run.take(Answer::ok("r1")).is_err());
    }

    #[test]
    fn a_request_whose_expiry_is_no_date_is_declined_at_once_saying_why() {
        let vague = Request::new("approval", "Buy?")
            .with_id("r1")
            .with_expires_at("tomorrow");
        let mut run = waiting_on(vec![vague]);
        assert_eq!(run.expire(SystemTime::UNIX_EPOCH), None);
        assert_eq!(run.answers.len(), 1);
        assert_eq!(run.answers[0].refusal(), Some(&Refusal::Expired));
        let note = run.answers[0].note().unwrap_or_default();
        assert!(
            note.contains("tomorrow") && note.contains("RFC 3339"),
            "{note}"
        );
    }

    #[test]
    fn a_bare_approval_of_a_ruled_gate_is_refused_and_changes_nothing() {
        let (mut run, gate) = halted_payment(true);
        let bare = run.take(Answer::ok(&gate.id)).unwrap_err().to_string();
        assert!(bare.contains("no receipt"), "{bare}");
        assert!(run.answers.is_empty() && run.answered.is_empty());
        assert_eq!(run.open().len(), 1);
        let input = AnswerInput::new(serde_json::to_value(Answer::ok(&gate.id)).unwrap());
        let validated = run.admit(&input).unwrap_err().to_string();
        assert!(validated.contains("no receipt"), "{validated}");
    }

    #[test]
    fn receipts_for_another_call_or_too_few_people_are_refused() {
        let (mut run, gate) = halted_payment(true);
        let asked = json!({"cents": 900_000});
        let mut one = Answer::ok(&gate.id);
        one.receipts = vec![vote(&gate, "alice", &asked, true)];
        let short = run.take(one).unwrap_err().to_string();
        assert!(short.contains("1 of 2"), "{short}");
        let other = json!({"cents": 1});
        let mut elsewhere = Answer::ok(&gate.id);
        elsewhere.receipts = vec![
            vote(&gate, "alice", &other, false),
            vote(&gate, "bob", &other, true),
        ];
        let moved = run.take(elsewhere).unwrap_err().to_string();
        assert!(moved.contains("another call"), "{moved}");
        assert!(run.answers.is_empty() && run.answered.is_empty());
    }

    #[test]
    fn the_inbox_receipts_of_a_quorum_are_taken_and_a_refusal_needs_none() {
        let (mut run, gate) = halted_payment(true);
        let asked = json!({"cents": 900_000});
        let mut signed = Answer::ok(&gate.id);
        signed.receipts = vec![
            vote(&gate, "alice", &asked, false),
            vote(&gate, "bob", &asked, true),
        ];
        assert!(run.take(signed).is_ok());
        assert_eq!(run.answers.len(), 1);

        let (mut run, gate) = halted_payment(true);
        assert!(run.take(Answer::decline(&gate.id, "no")).is_ok());
    }

    #[test]
    fn without_a_verifier_a_bare_approval_is_taken_as_before() {
        let (mut run, gate) = halted_payment(false);
        assert!(run.take(Answer::ok(&gate.id)).is_ok());
    }

    #[test]
    fn a_malformed_answer_says_what_an_answer_is() {
        let why = parse_answer(&json!({"ok": true}).into())
            .unwrap_err()
            .to_string();
        assert!(why.contains("\"id\""), "{why}");
        assert!(parse_answer(&json!({"id": "", "ok": true}).into()).is_err());
        assert!(parse_answer(&json!("approve").into()).is_err());
        assert_eq!(
            parse_answer(&json!({"id": "r1", "ok": true}).into())
                .unwrap()
                .id,
            "r1"
        );
    }
}
