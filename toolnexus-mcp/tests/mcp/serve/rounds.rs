//! A suspension as an input-required round (2026-07-28) or a call held open (before 2026): next
//! questions, re-runs, several questions, retries and calls that bring their answer.

use super::*;

#[tokio::test]
async fn on_2026_07_28_a_suspension_is_an_input_required_round() {
    let human = Human::new(form_and_url(), []);
    let client = client(shop(), human, modern()).await;
    let args = json!({"item": "gpu"});
    let CallToolResponse::InputRequired(input) = client
        .call_tool_once(call("approve_purchase", args.clone()))
        .await
        .unwrap()
    else {
        panic!("a suspension is an input_required result")
    };
    let requests = input.input_requests.unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.into_iter().next().unwrap();
    // Keyed by the request id, a v4 uuid.
    assert_eq!(key.len(), 36, "{key}");
    let InputRequest::Elicitation(elicit) = request else {
        panic!("an elicitation")
    };
    let ElicitRequestParams::FormElicitationParams { message, .. } = &elicit.params else {
        panic!("an approval is a form")
    };
    assert_eq!(message, "Approve purchase of gpu?");
    let state = input.request_state.expect("the request travels sealed");

    let retry = |state: String, action: &str| {
        let mut params = call("approve_purchase", args.clone());
        params.request_state = Some(state);
        params.input_responses =
            Some([(key.clone(), json!({"action": action, "content": {}}))].into());
        params
    };
    let finish = |response| match response {
        CallToolResponse::Complete(result) => text(&result),
        _ => panic!("the retry completes"),
    };

    // A state this server did not seal, or a retry with other arguments than the call
    // that asked, is a protocol error: the client altered what it must echo unchanged.
    let mut forged = state.clone();
    forged.pop();
    let refused = invalid_params(client.call_tool_once(retry(forged, "accept")).await);
    assert!(refused.contains("did not issue"), "{refused}");
    let mut other = retry(state.clone(), "accept");
    other.arguments = Some(json!({"item": "yacht"}).as_object().unwrap().clone());
    let refused = invalid_params(client.call_tool_once(other).await);
    assert!(refused.contains("other arguments"), "{refused}");

    let declined = finish(
        client
            .call_tool_once(retry(state.clone(), "decline"))
            .await
            .unwrap(),
    );
    assert_eq!(
        declined,
        (
            true,
            "declined/expired: Approve purchase of gpu? (reason: declined)".to_owned()
        )
    );
    let approved = finish(client.call_tool_once(retry(state, "accept")).await.unwrap());
    assert_eq!(approved, (false, "approved: gpu".to_owned()));
}

#[tokio::test]
async fn on_2026_07_28_a_tool_asks_its_next_question_as_the_next_round() {
    let (client, first) = greet_asked().await;
    let name = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let (keys, second) = round(again(&client, "greet", Some(&first), name).await);
    assert_eq!(keys, ["city"], "the answered tool's own next question");
    assert_ne!(second, first, "each round seals its own request");
    let city = json!({"city": {"action": "accept", "content": {"answer": "Paris"}}});
    let done = complete(again(&client, "greet", Some(&second), city).await);
    assert_eq!(done, (false, r#"hello from "Paris""#.to_owned()));

    // rmcp's own loop takes every round to the person.
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({"name": "Bo"})),
            Says::Accept(json!({"answer": "Oslo"})),
        ],
    );
    let client = crate::support::client(greeter(), human.clone(), modern()).await;
    let done = ask(&client, "greet", json!({})).await;
    assert_eq!(done, (false, r#"hello from "Oslo""#.to_owned()));
    let ElicitRequestParams::FormElicitationParams { message, .. } = &human.asked()[1] else {
        panic!("a form")
    };
    assert_eq!(message, "Where do you live, Bo?");
}

#[tokio::test]
async fn before_2026_a_tool_asks_its_next_question_while_the_call_is_held_open() {
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({"name": "Bo"})),
            Says::Accept(json!({"answer": "Oslo"})),
        ],
    );
    let client = client(greeter(), human.clone(), legacy()).await;
    let done = ask(&client, "greet", json!({})).await;
    assert_eq!(done, (false, r#"hello from "Oslo""#.to_owned()));
    assert_eq!(human.asked().len(), 2);
}

#[tokio::test]
async fn a_re_run_that_asks_again_ends_the_call_as_the_core_settles_it() {
    // What the core's settlement for a host that carries rounds makes of it.
    let tk = Toolkit::builder().tool(Stubborn).build().unwrap();
    let asked = tk
        .execute("stubborn", json!({}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&asked).unwrap();
    let ada = Answer::ok(&request.id).with_data(json!({"name": "Ada"}));
    let settled = tk
        .settle_round("stubborn", json!({}), &request, ada, ToolContext::default())
        .await;
    let ended = (true, settled.output);

    let client = client(greeter(), Human::new(form_and_url(), []), modern()).await;
    let (keys, state) = round(client.call_tool_once(call("stubborn", json!({}))).await);
    let answer = json!({&keys[0]: {"action": "accept", "content": {"name": "Ada"}}});
    let done = complete(again(&client, "stubborn", Some(&state), answer).await);
    assert_eq!(done, ended, "no further round");

    // Held open, the person is asked once.
    let human = Human::new(form_and_url(), [Says::Accept(json!({"name": "Ada"}))]);
    let client = crate::support::client(greeter(), human.clone(), legacy()).await;
    let done = ask(&client, "stubborn", json!({})).await;
    assert_eq!(done, ended);
    assert_eq!(human.asked().len(), 1);
}

/// Asks for a name and a city at once, then greets with both
#[tool]
async fn introduce(ctx: &ToolContext) -> ToolResult {
    match ctx.answers.as_slice() {
        [] => pending_all![
            (
                kind = "input",
                id = "name",
                prompt = "Your name?",
                answer = Name
            ),
            (kind = "question", id = "city", prompt = "Your city?"),
        ],
        [name, city] => ToolResult::ok(format!(
            "{} from {}",
            name.data.as_ref().unwrap()["name"],
            city.data.as_ref().unwrap()["answer"]
        )),
        other => ToolResult::error(format!("{} answers", other.len())),
    }
}

fn introducer() -> McpServer {
    McpServer::new(Toolkit::builder().tool(Introduce).build().unwrap())
}

#[tokio::test]
async fn on_2026_07_28_several_questions_are_one_round_answered_in_parts() {
    let client = client(introducer(), Human::new(form_and_url(), []), modern()).await;
    let (mut keys, first) = round(client.call_tool_once(call("introduce", json!({}))).await);
    keys.sort();
    assert_eq!(keys, ["city", "name"], "both questions in one round");

    // The name alone: only the city is asked again, the name sealed with the state.
    let name = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let (keys, second) = round(again(&client, "introduce", Some(&first), name).await);
    assert_eq!(keys, ["city"]);
    let city = json!({"city": {"action": "accept", "content": {"answer": "Paris"}}});
    let done = complete(again(&client, "introduce", Some(&second), city.clone()).await);
    assert_eq!(done, (false, r#""Ada" from "Paris""#.to_owned()));

    // The city again against the first state: the name was never given there.
    let (keys, _) = round(again(&client, "introduce", Some(&first), city).await);
    assert_eq!(keys, ["name"]);

    // A refusal of either ends the call without the other answer.
    let no = json!({"city": {"action": "decline"}});
    let (refused, text) = complete(again(&client, "introduce", Some(&first), no).await);
    assert!(refused, "{text}");
    assert!(text.starts_with("declined/expired: Your city?"), "{text}");
}

#[tokio::test]
async fn before_2026_several_questions_are_elicited_one_after_the_other() {
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({"name": "Bo"})),
            Says::Accept(json!({"answer": "Oslo"})),
        ],
    );
    let client = client(introducer(), human.clone(), legacy()).await;
    let done = ask(&client, "introduce", json!({})).await;
    assert_eq!(done, (false, r#""Bo" from "Oslo""#.to_owned()));
    let asked: Vec<String> = human
        .asked()
        .iter()
        .map(|p| match p {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            other => panic!("a form, not {other:?}"),
        })
        .collect();
    assert_eq!(asked, ["Your name?", "Your city?"]);
}

#[tokio::test]
async fn on_2026_07_28_a_retry_without_the_answer_is_asked_again() {
    let (client, state) = greet_asked().await;
    let wrong = json!({"nickname": {"action": "accept", "content": {"name": "Ada"}}});
    let (keys, _) = round(again(&client, "greet", Some(&state), wrong).await);
    assert_eq!(keys, ["name"], "the same request, still to answer");

    // A response that is no elicitation result is refused, not taken for an answer.
    let garbage = json!({"name": 12345});
    let refused = invalid_params(again(&client, "greet", Some(&state), garbage).await);
    assert!(refused.contains("not an elicitation result"), "{refused}");
}

#[tokio::test]
async fn on_2026_07_28_a_call_that_brings_the_answer_to_what_it_asks_is_answered() {
    let client = client(greeter(), Human::new(form_and_url(), []), modern()).await;
    // No requestState: the server asks `name` anew, and the response keyed by it (beside
    // ones it never asked) answers it.
    let responses = json!({
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "unasked": {"action": "accept", "content": {"x": 1}},
    });
    let (keys, _) = round(again(&client, "greet", None, responses).await);
    assert_eq!(keys, ["city"], "past the first question");
    let unrelated = json!({"unasked": {"action": "accept", "content": {}}});
    let (keys, _) = round(again(&client, "greet", None, unrelated).await);
    assert_eq!(keys, ["name"]);
    let garbage = json!({"name": 12345});
    let refused = invalid_params(again(&client, "greet", None, garbage).await);
    assert!(refused.contains("not an elicitation result"), "{refused}");
}
