//! The built-in `question` tool: the request it parks on (its prompt rendered by the rule
//! every port follows), what the model gets back, and both ways of answering it through
//! `LlmClient` — inline with `wait_for`, and durably, by halting and resuming.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::builtin::Question;
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    Answer, LlmClient, Message, MetricEvent, Request, RunStatus, Style, Tool, ToolContext,
    ToolResult, Toolkit,
};

/// The request the first call parks on, checked for what every suspension must carry.
async fn ask(questions: Value) -> Request {
    let parked = Question
        .execute(json!({ "questions": questions }), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&parked)
        .unwrap_or_else(|| panic!("the first call suspends, got {parked:?}"));
    assert!(parked.is_error, "a suspension is not a usable answer");
    assert_eq!(parked.output, request.prompt);
    assert_eq!(request.kind, "question");
    assert_eq!(request.url, None);
    assert_eq!(request.data, Some(json!({ "questions": questions })));
    request
}

#[tokio::test]
async fn the_prompt_is_rendered_byte_for_byte_by_the_ports_rule() {
    // Each case is one of the other ports' own test cases.
    let cases = [
        (
            json!([
                {"question": "Pick a color?", "header": "Choice", "options": ["red", "green"], "multiple": false},
                {"question": "Confirm?"},
            ]),
            "Pick a color? (options: red, green)\nConfirm?",
        ),
        (
            json!([
                {"question": "Pick a colour", "header": "Colour", "options": ["red", "green"]},
                {"question": "Free text?"},
            ]),
            "Pick a colour (options: red, green)\nFree text?",
        ),
        (
            json!([{"question": "Pick a color?", "options": ["red", "green"]}]),
            "Pick a color? (options: red, green)",
        ),
        (
            json!([{"question": "Just this", "options": []}]),
            "Just this",
        ),
        (json!([]), ""),
        // Only the text and the options are rendered: the header and `multiple` are not,
        // options keep their order and their own spacing, and nothing is escaped.
        (
            json!([
                {"question": "Sizes?", "header": "Size", "options": ["S", " M ", "L, XL"], "multiple": true},
                {"question": "Notes (optional)\tplease", "header": "Notes"},
                {"question": "", "options": ["only"]},
            ]),
            "Sizes? (options: S,  M , L, XL)\nNotes (optional)\tplease\n (options: only)",
        ),
    ];
    for (questions, expected) in cases {
        let request = ask(questions.clone()).await;
        assert_eq!(request.prompt, expected, "for {questions}");
    }
}

#[tokio::test]
async fn the_answer_data_goes_back_to_the_model_as_json() {
    let args = json!({"questions": [{"question": "Pick a color?", "options": ["red", "green"]}]});
    let request = ask(args["questions"].clone()).await;
    let run = |answer: Answer| {
        let args = args.clone();
        async move {
            Question
                .execute(args, ToolContext::default().with_answer(answer))
                .await
        }
    };

    let data = json!({"answers": [["red"]], "note": "dark \"red\" please"});
    let done = run(Answer::ok(&request.id).with_data(data.clone())).await;
    assert_eq!(
        done,
        ToolResult::ok(r#"{"answers":[["red"]],"note":"dark \"red\" please"}"#)
    );
    assert_eq!(serde_json::from_str::<Value>(&done.output).unwrap(), data);

    assert_eq!(run(Answer::ok(&request.id)).await, ToolResult::ok("{}"));

    let refused = run(Answer::decline(&request.id, "declined")).await;
    assert!(refused.is_error && !refused.is_pending());
    assert_eq!(refused.output, "question: not answered (declined)");
}

#[tokio::test]
async fn arguments_off_the_schema_are_an_error_naming_the_field() {
    let cases = [
        (json!(null), "expected a JSON object, got null"),
        (json!({}), "missing required argument `questions`"),
        (
            json!({"questions": "Pick?"}),
            "`questions` must be an array, got a string",
        ),
        (
            json!({"questions": ["Pick?"]}),
            "`questions[0]` must be an object, got a string",
        ),
        (
            json!({"questions": [{"question": "a"}, {"header": "b"}]}),
            "`questions[1]` has no `question`",
        ),
        (
            json!({"questions": [{"question": 7}]}),
            "`questions[0].question` must be a string, got a number",
        ),
        (
            json!({"questions": [{"question": "a", "options": "x, y"}]}),
            "`questions[0].options` must be an array, got a string",
        ),
        (
            json!({"questions": [{"question": "a", "options": ["x", 2]}]}),
            "`questions[0].options[1]` must be a string, got a number",
        ),
        (
            json!({"questions": [{"question": "a", "header": false}]}),
            "`questions[0].header` must be a string, got a boolean",
        ),
        (
            json!({"questions": [{"question": "a", "multiple": "yes"}]}),
            "`questions[0].multiple` must be a boolean, got a string",
        ),
    ];
    for (args, problem) in cases {
        let result = Question.execute(args.clone(), ToolContext::default()).await;
        assert!(!result.is_pending(), "{args}");
        assert_eq!(
            result,
            ToolResult::error(format!("invalid arguments for question: {problem}")),
            "for {args}"
        );
    }
}

#[test]
fn it_is_declared_with_the_ports_argument_shape() {
    let tk = Toolkit::builder().tool(Question).build().unwrap();
    let declared = &tk.to_openai()[0]["function"];
    assert_eq!(declared["name"], "question");
    let parameters = &declared["parameters"];
    // What the ports accept: a required list of questions, each needing only its text.
    assert_eq!(parameters["required"], json!(["questions"]));
    assert_eq!(parameters["additionalProperties"], json!(false));
    let questions = &parameters["properties"]["questions"];
    assert_eq!(questions["type"], "array");
    let item = &questions["items"];
    assert_eq!(item["required"], json!(["question"]));
    for (field, kind) in [
        ("question", "string"),
        ("header", "string"),
        ("options", "array"),
        ("multiple", "boolean"),
    ] {
        assert_eq!(item["properties"][field]["type"], kind, "{field}");
    }
    assert_eq!(item["properties"]["options"]["items"]["type"], "string");
    assert_eq!(Question.source().to_string(), "builtin");
}

fn questions() -> Value {
    json!({"questions": [
        {"question": "Which color?", "header": "Color", "options": ["red", "green"]},
        {"question": "Gift wrap?"},
    ]})
}

const PROMPT: &str = "Which color? (options: red, green)\nGift wrap?";

/// The content of the tool result the model was sent for `call_1`.
fn tool_result_sent(request: &RecordedRequest) -> Value {
    request
        .messages()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_1")
        .map(|m| m["content"].clone())
        .unwrap_or_else(|| panic!("no tool result in {:?}", request.messages()))
}

#[tokio::test]
async fn a_run_asks_through_wait_for_and_the_model_reads_the_answers() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "question", questions()),
        Reply::text("Red, wrapped."),
    ])
    .await
    .unwrap();
    let asked: Arc<Mutex<Vec<Request>>> = Arc::default();
    let events: Arc<Mutex<Vec<MetricEvent>>> = Arc::default();
    let (seen, metrics) = (asked.clone(), events.clone());
    let client = LlmClient::builder()
        .base_url(mock.base_url())
        .style(Style::OpenAi)
        .model("m")
        .api_key("test-key")
        .wait_for(move |req: Request| {
            seen.lock().unwrap().push(req.clone());
            async move { Answer::ok(req.id).with_data(json!({"answers": [["red"], ["yes"]]})) }
        })
        .on_metric(move |ev: &MetricEvent| metrics.lock().unwrap().push(ev.clone()))
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(Question).build().unwrap();

    let result = client.run("order a shirt", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "Red, wrapped.");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, "question");
    assert_eq!(asked[0].prompt, PROMPT);
    assert_eq!(
        asked[0].data,
        Some(json!({"questions": questions()["questions"]}))
    );
    let answers = r#"{"answers":[["red"],["yes"]]}"#;
    assert_eq!(result.tool_calls[0].output, answers);
    assert!(!result.tool_calls[0].is_error);
    assert_eq!(tool_result_sent(&mock.requests()[1]), answers);
    let sources: Vec<(String, bool)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|ev| match ev {
            MetricEvent::Tool {
                source, pending, ..
            } => Some((source.clone(), *pending)),
            _ => None,
        })
        .collect();
    assert_eq!(
        sources,
        [("builtin".to_owned(), true), ("builtin".to_owned(), false)]
    );
}

#[tokio::test]
async fn a_run_halts_on_the_questions_and_resumes_with_the_answers_elsewhere() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "question", questions()),
        Reply::text("Green, not wrapped."),
    ])
    .await
    .unwrap();
    let client = || {
        LlmClient::builder()
            .base_url(mock.base_url())
            .style(Style::Anthropic)
            .model("claude-x")
            .api_key("test-key")
            .build()
            .unwrap()
    };
    let tk = Toolkit::builder().tool(Question).build().unwrap();

    let halted = client().run("order a shirt", &tk).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.kind, "question");
    assert_eq!(request.prompt, PROMPT);

    // What a durable host stores, loaded back as another process would.
    let stored = serde_json::to_string(&(&halted.messages, &request)).unwrap();
    let (messages, request): (Vec<Message>, Request) = serde_json::from_str(&stored).unwrap();
    let answer = Answer::ok(&request.id).with_data(json!({"answers": [["green"], ["no"]]}));
    let done = client()
        .run_with_answer(messages, &request, answer, &tk)
        .await
        .unwrap();

    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "Green, not wrapped.");
    let blocks = mock.requests()[1].messages().last().unwrap()["content"].clone();
    assert_eq!(blocks[0]["type"], "tool_result");
    assert_eq!(blocks[0]["tool_use_id"], "call_1");
    assert_eq!(blocks[0]["content"], r#"{"answers":[["green"],["no"]]}"#);
    assert_eq!(
        blocks.as_array().unwrap().len(),
        1,
        "the placeholder was replaced"
    );
}
