//! Sub-agents as tools: a planner calls a payments agent, which calls an approvals agent,
//! whose refunds a person must approve. The approval reaches the planner's run — inline,
//! durably, resumed from JSON in fresh clients, after a crash — and each refund happens
//! once.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use serde_json::{json, Value};
use toolnexus::testing::{Approvers, Decision, MockLlm, Reply};
use toolnexus::{
    pending, tool, Answer, Approval, ClientError, Edits, InMemoryJournal, LlmClient, Message,
    NativeTool, Request, RunResult, RunStatus, SubAgent, Tool, ToolContext, ToolResult, ToolSource,
    Toolkit,
};

/// Refunds an order
#[tool(approval(
    prompt = "Refund order {order}?",
    responders = ["group:finance"],
    quorum = 2,
))]
async fn refund(order: String) -> String {
    *REFUNDS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(order.clone())
        .or_default() += 1;
    format!("refunded {order}")
}

/// Tells the customer; asks what to write
#[tool]
async fn notify(order: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) => ToolResult::ok(format!(
            "told {order}: {}",
            a.data.clone().unwrap_or_default()
        )),
        None => pending!(
            kind = "input",
            prompt = format!("What should {order}'s customer read?")
        ),
    }
}

/// How many times each order was refunded: each test refunds orders of its own, so tests
/// running at the same time do not count each other's.
static REFUNDS: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

fn refunds(order: &str) -> usize {
    let refunds = REFUNDS.lock().unwrap_or_else(PoisonError::into_inner);
    refunds.get(order).copied().unwrap_or_default()
}

/// The three models of a test: the planner's, the payments agent's, the approvals agent's.
struct Models {
    planner: MockLlm,
    payments: MockLlm,
    approvals: MockLlm,
}

impl Models {
    /// Each agent hands the task down once and sums up what came back; the approvals
    /// agent refunds `orders` in one turn.
    async fn refunding(orders: &[&str]) -> Self {
        let calls: Vec<(String, &str, Value)> = orders
            .iter()
            .enumerate()
            .map(|(i, order)| (format!("a{i}"), "refund", json!({ "order": order })))
            .collect();
        let approvals = [
            Reply::tool_calls(calls),
            Reply::text(format!("Refunded {}.", orders.join(", "))),
        ];
        Models::with_approvals(orders, approvals).await
    }

    async fn with_approvals(orders: &[&str], approvals: impl IntoIterator<Item = Reply>) -> Self {
        let task = format!("Refund {}", orders.join(" and "));
        Models {
            planner: MockLlm::start([
                Reply::tool_call("c1", "payments", json!({ "task": task })),
                Reply::text("The planner is done."),
            ])
            .await
            .unwrap(),
            payments: MockLlm::start([
                Reply::tool_call("p1", "approvals", json!({ "task": task })),
                Reply::text("Payments are done."),
            ])
            .await
            .unwrap(),
            approvals: MockLlm::start(approvals).await.unwrap(),
        }
    }

    /// The planner's toolkit: the payments agent, whose toolkit is the approvals agent,
    /// whose toolkit refunds and notifies. Built afresh each time, as another process
    /// builds it.
    fn toolkit(&self) -> Toolkit {
        let client = |model: &MockLlm| model.client().build().unwrap();
        let approvals_tools = Toolkit::builder()
            .tool(Refund)
            .tool(Notify)
            .build()
            .unwrap();
        let approvals = SubAgent::new(client(&self.approvals), approvals_tools)
            .instructions("You make refunds.")
            .into_tool("approvals", "Makes refunds once a person approves them");
        let payments_tools = Toolkit::builder().tool(approvals).build().unwrap();
        let payments = SubAgent::new(client(&self.payments), payments_tools)
            .instructions("You handle payments.")
            .into_tool("payments", "Handles payments and refunds");
        Toolkit::builder().tool(payments).build().unwrap()
    }

    fn client(&self) -> LlmClient {
        self.planner.client().build().unwrap()
    }
}

/// The transcript as a host keeps it between processes.
fn kept(messages: &[Message]) -> Vec<Message> {
    serde_json::from_str(&serde_json::to_string(messages).unwrap()).unwrap()
}

fn finance() -> Approvers {
    Approvers::new().tool("refund", Decision::approve())
}

/// What the model read as the result of its call `id`.
fn tool_result(run: &RunResult, id: &str) -> (String, bool) {
    let call = run
        .tool_calls
        .iter()
        .find(|c| c.id == id)
        .expect("the call");
    (call.output.clone(), call.is_error)
}

#[tokio::test]
async fn an_approval_three_levels_down_halts_the_planner_and_resumes_every_level_in_fresh_clients()
{
    let models = Models::refunding(&["A-7"]).await;
    let halted = models
        .client()
        .run("Refund A-7", &models.toolkit())
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let [request] = halted.waiting.as_slice() else {
        panic!("one question: {:?}", halted.waiting)
    };
    assert_eq!(request.prompt, "payments > approvals: Refund order A-7?");
    assert_eq!(request.kind, "approval");
    assert!(request.id.starts_with("payments-"), "{}", request.id);
    let relay = request.relay().expect("relayed");
    assert_eq!(relay.path, ["payments", "approvals", "refund"]);
    assert_eq!(relay.prompt, "Refund order A-7?");
    // The rule of the tool that asked, as its own run asked it.
    let rule = request.rule().unwrap();
    assert_eq!(rule.responders, Some(vec!["group:finance"]));
    assert_eq!(rule.quorum, 2);
    assert_eq!(rule.edits, Edits::Any);
    assert_eq!(refunds("A-7"), 0, "nothing ran before the approval");

    // Another process: the transcript from JSON, new clients and toolkits.
    let text = serde_json::to_string(&halted.messages).unwrap();
    let messages: Vec<Message> = serde_json::from_str(&text).unwrap();
    let done = models
        .client()
        .run_with_answers(messages, vec![Answer::ok(&request.id)], &models.toolkit())
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "The planner is done.");
    assert_eq!(
        tool_result(&done, "c1"),
        ("Payments are done.".into(), false)
    );
    assert_eq!(refunds("A-7"), 1);
    // Each agent's model was asked once more, after its tool's result.
    assert_eq!(models.approvals.calls(), 2);
    assert_eq!(models.payments.calls(), 2);
    assert_eq!(models.planner.calls(), 2);
    let approvals_read = models.approvals.requests()[1].body.to_string();
    assert!(approvals_read.contains("refunded A-7"), "{approvals_read}");
    let payments_read = models.payments.requests()[1].body.to_string();
    assert!(payments_read.contains("Refunded A-7."), "{payments_read}");
}

#[tokio::test]
async fn three_levels_inline_the_planners_wait_for_answers_the_innermost_approval() {
    let models = Models::refunding(&["I-1"]).await;
    let people = finance();
    let done = people
        .drive_inline(models.planner.client(), &models.toolkit(), "Refund I-1")
        .await
        .unwrap();
    assert_eq!((done.result.status, done.halts), (RunStatus::Done, 0));
    assert_eq!(done.output("payments"), Some("Payments are done."));
    assert_eq!(refunds("I-1"), 1);
    people.asked_exactly(["payments > approvals: Refund order I-1?"]);
    let asked = &people.questions()[0];
    assert_eq!(asked.tool.as_deref(), Some("refund"), "the tool that asked");
    assert_eq!(asked.args, Some(json!({"order": "I-1"})));
}

#[tokio::test]
async fn three_levels_durable_each_halt_resumed_from_json() {
    let models = Models::refunding(&["D-1"]).await;
    let people = finance();
    let done = people
        .drive(&models.client(), &models.toolkit(), "Refund D-1")
        .await
        .unwrap();
    assert_eq!((done.result.status, done.halts), (RunStatus::Done, 1));
    assert_eq!(done.text(), "The planner is done.");
    assert_eq!(refunds("D-1"), 1);
    people.asked_exactly(["payments > approvals: Refund order D-1?"]);
}

#[tokio::test]
async fn several_questions_at_once_halt_together_with_ids_of_their_own_and_each_resumes_once() {
    let models = Models::refunding(&["S-1", "S-2"]).await;
    let tk = models.toolkit();
    let halted = models.client().run("Refund both", &tk).await.unwrap();
    let prompts: Vec<&str> = halted.waiting.iter().map(|r| r.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        [
            "payments > approvals: Refund order S-1?",
            "payments > approvals: Refund order S-2?"
        ]
    );
    let ids: Vec<&str> = halted.waiting.iter().map(|r| r.id.as_str()).collect();
    assert_ne!(ids[0], ids[1]);
    // Not the ids the innermost run asked with, which another agent's run could share.
    for id in &ids {
        assert!(
            id.starts_with("payments-") && !id.contains("approval-"),
            "{id}"
        );
    }

    // One answer keeps the planner waiting on the other, in another process.
    let first = Answer::ok(ids[0]);
    let half = models
        .client()
        .run_with_answers(kept(&halted.messages), vec![first], &models.toolkit())
        .await
        .unwrap();
    assert_eq!(half.status, RunStatus::Pending);
    assert_eq!(half.waiting, vec![halted.waiting[1].clone()]);
    assert_eq!((refunds("S-1"), refunds("S-2")), (0, 0));

    let second = Answer::ok(ids[1]);
    let done = models
        .client()
        .run_with_answers(kept(&half.messages), vec![second], &models.toolkit())
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!((refunds("S-1"), refunds("S-2")), (1, 1));
    assert_eq!(models.approvals.calls(), 2);
}

#[tokio::test]
async fn a_refusal_at_the_innermost_level_reaches_the_planner_as_a_declined_result() {
    let models = Models::refunding(&["R-1"]).await;
    let people = Approvers::new().tool("refund", Decision::decline("not this one"));
    let done = people
        .drive(&models.client(), &models.toolkit(), "Refund R-1")
        .await
        .unwrap();
    assert_eq!(done.result.status, RunStatus::Done);
    assert_eq!(
        tool_result(&done.result, "c1"),
        (
            "declined/expired: payments > approvals: Refund order R-1? (reason: not this one)"
                .into(),
            true
        )
    );
    assert_eq!(refunds("R-1"), 0);
    // The agents' runs were not taken up again: only the planner read the refusal.
    assert_eq!(models.approvals.calls(), 1);
    assert_eq!(models.payments.calls(), 1);
    assert_eq!(models.planner.calls(), 2);
}

#[tokio::test]
async fn an_edit_reaches_the_innermost_call_which_runs_with_it() {
    let models = Models::refunding(&["E-1"]).await;
    let people = Approvers::new().tool("refund", Decision::edit(json!({"order": "E-2"})));
    let done = people
        .drive(&models.client(), &models.toolkit(), "Refund E-1")
        .await
        .unwrap();
    assert_eq!(done.result.status, RunStatus::Done);
    assert_eq!((refunds("E-1"), refunds("E-2")), (0, 1));
    let approvals_read = models.approvals.requests()[1].body.to_string();
    assert!(approvals_read.contains("refunded E-2"), "{approvals_read}");
    assert!(
        approvals_read.contains("a person changed the arguments before this call ran: order"),
        "{approvals_read}"
    );
}

#[tokio::test]
async fn an_edit_that_does_not_fit_the_innermost_tool_is_refused_before_anything_runs() {
    let models = Models::refunding(&["F-1"]).await;
    let halted = models
        .client()
        .run("Refund F-1", &models.toolkit())
        .await
        .unwrap();
    let request = &halted.waiting[0];
    let misfit = Answer::ok(&request.id).with_args(json!({"order": 7}));
    let refused = models
        .client()
        .run_with_answers(halted.messages.clone(), vec![misfit], &models.toolkit())
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ClientError::InvalidAnswer { request: r, .. } if *r == request.id),
        "{refused:?}"
    );
    assert_eq!(refunds("F-1"), 0);
    assert_eq!(models.approvals.calls(), 1);
}

#[tokio::test]
async fn the_same_call_asks_with_the_same_ids_and_another_call_with_others() {
    let ids =
        |run: &RunResult| -> Vec<String> { run.waiting.iter().map(|r| r.id.clone()).collect() };
    let one = Models::refunding(&["U-1"]).await;
    let first = one
        .client()
        .run("Refund U-1", &one.toolkit())
        .id("run-u")
        .await
        .unwrap();
    let two = Models::refunding(&["U-1"]).await;
    let again = two
        .client()
        .run("Refund U-1", &two.toolkit())
        .id("run-u")
        .await
        .unwrap();
    assert_eq!(
        ids(&first),
        ids(&again),
        "derived from the run and the call"
    );
    let three = Models::refunding(&["U-1"]).await;
    let other = three
        .client()
        .run("Refund U-1", &three.toolkit())
        .id("run-v")
        .await
        .unwrap();
    assert_ne!(ids(&first), ids(&other));
}

#[tokio::test]
async fn an_agent_that_asks_again_after_an_answer_asks_in_a_next_round_inline_and_durably() {
    for inline in [false, true] {
        let order = format!("N-{inline}");
        let approvals = [
            Reply::tool_call("a1", "refund", json!({ "order": order })),
            Reply::tool_call("a2", "notify", json!({ "order": order })),
            Reply::text("Refunded and told."),
        ];
        let models = Models::with_approvals(&[&order], approvals).await;
        let people = finance().when(|ask| {
            (ask.request.kind == "input").then(|| Decision::fill(json!("sorry for the wait")))
        });
        let (client, tk) = (models.client(), models.toolkit());
        let done = match inline {
            true => people.drive_inline(models.planner.client(), &tk, "go"),
            false => people.drive(&client, &tk, "go"),
        }
        .await
        .unwrap();
        assert_eq!(done.result.status, RunStatus::Done, "inline: {inline}");
        assert_eq!(done.halts, if inline { 0 } else { 2 });
        assert_eq!(refunds(&order), 1);
        people.asked_exactly([
            format!("payments > approvals: Refund order {order}?"),
            format!("payments > approvals: What should {order}'s customer read?"),
        ]);
        let told = models.approvals.requests()[2].body.to_string();
        assert!(told.contains("sorry for the wait"), "{told}");
    }
}

#[tokio::test]
async fn a_crash_after_the_approval_repeats_no_step_of_any_level() {
    // Steps, in order: the planner's reply, its payments call, the payments reply, its
    // approvals call, the approvals reply, the refund's gate; the answer; then the resumed
    // calls and replies at each level.
    for at in 6..=12 {
        let order = format!("C-{at}");
        let models = Models::refunding(&[&order]).await;
        let people = finance();
        let done = people
            .drive(&models.client(), &models.toolkit(), "Refund it")
            .crash_after(at)
            .await
            .unwrap();
        assert_eq!(done.result.status, RunStatus::Done, "crash after {at}");
        assert_eq!(done.crashes, 1, "crash after {at}");
        assert_eq!(refunds(&order), 1, "crash after {at}");
        assert_eq!(models.approvals.calls(), 2, "crash after {at}");
        assert_eq!(models.payments.calls(), 2, "crash after {at}");
        assert_eq!(models.planner.calls(), 2, "crash after {at}");
    }
}

#[tokio::test]
async fn the_agents_steps_are_journaled_with_the_planners_and_replayed_on_a_second_resume() {
    let models = Models::refunding(&["J-1"]).await;
    let tk = models.toolkit();
    let halted = models.client().run("Refund J-1", &tk).await.unwrap();
    let answer = Answer::ok(&halted.waiting[0].id);
    let journal = InMemoryJournal::new();
    let done = models
        .client()
        .run_with_answers(kept(&halted.messages), vec![answer.clone()], &tk)
        .journal(&journal)
        .await
        .unwrap();
    // The planner's call and reply, the payments agent's call and reply, the approvals
    // agent's refund and reply.
    assert_eq!(journal.len(), 6);
    let again = models
        .client()
        .run_with_answers(kept(&halted.messages), vec![answer], &tk)
        .journal(&journal)
        .await
        .unwrap();
    assert_eq!(again.messages, done.messages);
    assert_eq!(refunds("J-1"), 1);
    assert_eq!(models.approvals.calls(), 2);
}

#[tokio::test]
async fn an_agent_tool_reports_its_source_and_takes_a_task() {
    let models = Models::refunding(&["T-1"]).await;
    let tk = models.toolkit();
    let payments = tk.get("payments").unwrap();
    assert_eq!(payments.source(), ToolSource::Agent { agent: "payments" });
    assert_eq!(payments.source().to_string(), "agent:payments");
    let schema = payments.input_schema();
    assert_eq!(schema["required"], json!(["task"]));
    assert_eq!(schema["properties"]["task"]["type"], "string");
    let wrong = tk
        .execute("payments", json!({"job": "x"}), ToolContext::default())
        .await;
    assert!(wrong.is_error && !wrong.is_pending());
    assert!(
        wrong.output.starts_with("invalid arguments for payments: "),
        "{}",
        wrong.output
    );
    // Answered without the halted run its question came from.
    let stray = ToolContext::default().with_answer(Answer::ok("payments-1"));
    let lost = tk.execute("payments", json!({"task": "x"}), stray).await;
    assert!(
        lost.output.contains("without the halted run"),
        "{}",
        lost.output
    );
}

#[tokio::test]
async fn called_directly_an_agent_tool_suspends_and_settles_with_the_toolkit() {
    let models = Models::refunding(&["X-1"]).await;
    let tk = models.toolkit();
    let args = json!({"task": "Refund X-1"});
    let parked = tk
        .execute("payments", args.clone(), ToolContext::default())
        .await;
    let asked: Vec<Request> = ToolResult::requests_of(&parked);
    assert_eq!(asked.len(), 1);
    // A host resolving calls itself settles it by the rule with rounds, handing the
    // re-run what the suspension kept.
    let answers = vec![Answer::ok(&asked[0].id)];
    let ctx = ToolContext::default().resuming(&parked);
    let settled = tk
        .settle_all_round("payments", args.clone(), &asked, answers.clone(), ctx)
        .await;
    assert_eq!(settled.output, "Payments are done.");
    assert_eq!(refunds("X-1"), 1);
    // Without it, the agent cannot go on, and says so.
    let lost = tk
        .settle_all_round("payments", args, &asked, answers, ToolContext::default())
        .await;
    assert!(
        lost.is_error && lost.output.contains("without the halted run"),
        "{}",
        lost.output
    );
}

#[tokio::test]
async fn a_relayed_question_is_settled_only_by_an_agents_call() {
    let models = Models::refunding(&["V-1"]).await;
    let halted = models
        .client()
        .run("Refund V-1", &models.toolkit())
        .await
        .unwrap();
    // A toolkit whose `payments` is a plain tool: the relayed gate would be answered on a
    // call that is no agent's, so nothing runs.
    let plain = NativeTool::of(
        "payments",
        "Handles payments",
        json!({"type": "object", "properties": {"task": {"type": "string"}}}),
        |_args, _ctx| async { "paid" },
    );
    let tk = Toolkit::builder().tool(plain).build().unwrap();
    let answer = Answer::ok(&halted.waiting[0].id);
    let refused = models
        .client()
        .run_with_answers(halted.messages, vec![answer], &tk)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ClientError::InvalidTranscript(why) if why.contains("no agent tool")),
        "{refused:?}"
    );
    assert_eq!(refunds("V-1"), 0);
}

#[tokio::test]
async fn several_questions_at_once_inline_each_go_to_wait_for_and_each_refund_runs_once() {
    let models = Models::refunding(&["W-1", "W-2"]).await;
    let people = finance();
    let done = people
        .drive_inline(models.planner.client(), &models.toolkit(), "Refund both")
        .await
        .unwrap();
    assert_eq!((done.result.status, done.halts), (RunStatus::Done, 0));
    assert_eq!((refunds("W-1"), refunds("W-2")), (1, 1));
    people.asked_exactly([
        "payments > approvals: Refund order W-1?",
        "payments > approvals: Refund order W-2?",
    ]);
    let ids: Vec<String> = people
        .questions()
        .iter()
        .map(|q| q.request.id.clone())
        .collect();
    assert_ne!(ids[0], ids[1]);
}

#[tokio::test]
async fn an_agent_call_gated_in_the_planners_run_asks_first_then_relays_its_agents_question() {
    for inline in [false, true] {
        let order = format!("G-{inline}");
        let models = Models::refunding(&[&order]).await;
        // The planner's own approval of calling the payments agent at all.
        let planner_tools = Toolkit::builder()
            .tools(models.toolkit().tools().iter().cloned())
            .approval(
                Approval::tools(["payments"])
                    .prompt(|name: &str, _args: &Value| format!("Let {name} act?")),
            )
            .build()
            .unwrap();
        let people = finance().prompt("Let payments act?", Decision::approve());
        let client = models.client();
        let done = match inline {
            true => people.drive_inline(models.planner.client(), &planner_tools, "go"),
            false => people.drive(&client, &planner_tools, "go"),
        }
        .await
        .unwrap();
        assert_eq!(done.result.status, RunStatus::Done, "inline: {inline}");
        assert_eq!(done.halts, if inline { 0 } else { 2 });
        assert_eq!(refunds(&order), 1);
        people.asked_exactly([
            "Let payments act?".to_owned(),
            format!("payments > approvals: Refund order {order}?"),
        ]);
    }
}

#[tokio::test]
async fn a_relayed_question_replayed_from_its_answer_is_declined_without_a_second_refund() {
    let models = Models::refunding(&["P-1"]).await;
    let (client, tk) = (models.client(), models.toolkit());
    let done = finance().drive(&client, &tk, "Refund P-1").await.unwrap();
    assert_eq!(refunds("P-1"), 1);
    let step = done.step_answering("payments > approvals: Refund order P-1?");

    // What if finance had declined? The three agents' replies before the answer are the
    // recorded ones; a refusal reaches the planner alone, which is asked once more.
    models.planner.push(Reply::text("The planner gave up."));
    let asked = [&models.planner, &models.payments, &models.approvals].map(MockLlm::calls);
    let declining = Approvers::new().tool("refund", Decision::decline("not this one"));
    let what_if = done
        .replay_from(step)
        .drive(&declining, &client, &tk)
        .await
        .unwrap();
    assert_eq!(what_if.text(), "The planner gave up.");
    assert_eq!(refunds("P-1"), 1, "the declined refund did not run");
    let now = [&models.planner, &models.payments, &models.approvals].map(MockLlm::calls);
    assert_eq!(now, [asked[0] + 1, asked[1], asked[2]]);
    declining.asked_exactly(["payments > approvals: Refund order P-1?"]);
    assert_eq!(declining.questions()[0].tool.as_deref(), Some("refund"));
}
