//! `ListTasks` over both bindings, driven by the official `a2a-sdk` client: a caller lists
//! the tasks they started, and the questions of those waiting on them to answer, and
//! nothing else, newest first, narrowed by context, state and
//! status time, a page at a time until the token runs out, with as much history and as
//! many artifacts as asked; what no client would send (a page size out of range, a forged
//! token, a state that does not exist) gets the binding's invalid-params error, over raw
//! HTTP. On SQLite and on PostgreSQL.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::MockLlm;
use toolnexus_a2a::A2aServerBuilder;
use toolnexus_inbox::BearerTokens;
use toolnexus_test_support::both_engines;

use crate::support::*;

both_engines!(
    a_caller_lists_their_own_tasks_over_both_bindings,
    nobody_lists_anothers_tasks_whatever_they_send,
    bad_list_requests_get_invalid_params_on_both_bindings,
    a_task_answered_last_is_listed_first,
);

const REST: &str = "HTTP+JSON";

/// Who calls, by token: a partner who starts tasks, a stranger, and finance, who alone
/// approves purchases.
const TOKENS: &str = "partner-token partner@vendor.example\n\
                      eve-token eve@elsewhere.example\n\
                      finance-token fin@shop.example finance\n";

/// The shop agent behind bearer tokens, whose purchases only finance approves (anyone
/// may answer a sign-in); `more` sets its server up further.
async fn shop(
    db: &TestDb,
    more: impl FnOnce(A2aServerBuilder) -> A2aServerBuilder + 'static,
) -> (Agent, MockLlm) {
    let model = model().await;
    let tokens = BearerTokens::parse(TOKENS).expect("the token lines");
    let options = Options {
        approvers: Some(vec!["group:finance"]),
        server: Some(Box::new(move |server| more(server.identify(tokens)))),
        ..Options::default()
    };
    let agent = Agent::serve_with(db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    (agent, model)
}

/// The ids of a listed page's tasks, in order.
fn ids(page: &Value) -> Vec<String> {
    page["tasks"]
        .as_array()
        .map(|tasks| {
            tasks
                .iter()
                .filter_map(|t| t["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn listed(result: &Value) -> &Value {
    assert!(result.get("list").is_some(), "a listed page: {result}");
    &result["list"]
}

fn id(result: &Value) -> String {
    task_of(result)["id"].as_str().expect("an id").to_owned()
}

async fn a_caller_lists_their_own_tasks_over_both_bindings(db: TestDb) {
    let (agent, _model) = shop(&db, |s| s).await;
    // The partner's four tasks, the last in the first one's context, and the stranger's.
    let started = drive(
        &agent.url,
        json!([
            {"send": {"text": "hello", "token": "partner-token"}},
            {"send": {"text": "buy a gpu", "token": "partner-token"}},
            {"send": {"text": "log me in", "token": "partner-token"}},
            {"send": {"text": "hello again", "context": "$context", "token": "partner-token"}},
            {"send": {"text": "hello", "token": "eve-token"}},
        ]),
    )
    .await;
    let [greeted, buying, signing, again, eves] = [0, 1, 2, 3, 4].map(|i| id(&started[i]));
    assert_eq!(state(task_of(&started[1])), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(state(task_of(&started[2])), "TASK_STATE_AUTH_REQUIRED");
    let context = task_of(&started[0])["contextId"].clone();
    let signing_at = task_of(&started[2])["status"]["timestamp"].clone();
    let newest_first = [&again, &signing, &buying, &greeted].map(|s| s.to_owned());

    for binding in ["JSONRPC", REST] {
        let as_partner = |fields: Value| {
            let mut fields = fields;
            fields["token"] = json!("partner-token");
            fields
        };
        let out = drive_over(
            &agent.url,
            binding,
            json!([
                {"list": as_partner(json!({}))},
                {"list": {"token": "eve-token"}},
                {"list": as_partner(json!({"contextId": context}))},
                {"list": as_partner(json!({"status": "TASK_STATE_INPUT_REQUIRED"}))},
                {"list": as_partner(json!({"statusTimestampAfter": signing_at}))},
                {"list": as_partner(json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"}))},
                {"list": as_partner(json!({"contextId": context, "historyLength": 1, "includeArtifacts": true}))},
                {"list": as_partner(json!({"contextId": context, "historyLength": 0}))},
                {"pages": as_partner(json!({"pageSize": 1}))},
                {"pages": as_partner(json!({"pageSize": 3}))},
                {"pages": as_partner(json!({"pageSize": 1, "status": "TASK_STATE_COMPLETED"}))},
            ]),
        )
        .await;
        let all = listed(&out[0]);
        assert_eq!(ids(all), newest_first, "{binding}: {all}");
        assert_eq!(all["totalSize"], 4, "{binding}");
        assert_eq!(all["pageSize"], 50, "{binding}: the default page");
        assert_eq!(all["nextPageToken"], "", "{binding}: one page is the last");
        let completed = &all["tasks"][3];
        assert_eq!(state(completed), "TASK_STATE_COMPLETED", "{binding}");
        assert!(
            completed["artifacts"].as_array().is_none_or(Vec::is_empty),
            "{binding}: artifacts only when asked: {completed}"
        );
        assert!(
            completed["history"]
                .as_array()
                .is_some_and(|h| h.len() >= 2),
            "{binding}: the whole history by default: {completed}"
        );

        // The stranger lists their own task, and the partner's sign-in, which anyone may
        // answer, as its question only; not the purchase, which only finance answers.
        let hers = listed(&out[1]);
        assert_eq!(ids(hers), [eves.as_str(), signing.as_str()], "{binding}");
        assert_eq!(hers["totalSize"], 2, "{binding}");
        let question = &hers["tasks"][1];
        assert_eq!(state(question), "TASK_STATE_AUTH_REQUIRED", "{binding}");
        assert!(
            question["history"].as_array().is_none_or(Vec::is_empty),
            "{binding}: the question, not the conversation: {question}"
        );

        assert_eq!(
            ids(listed(&out[2])),
            [again.as_str(), greeted.as_str()],
            "{binding}"
        );
        let waiting = listed(&out[3]);
        assert_eq!(ids(waiting), [buying.as_str()], "{binding}");
        assert_eq!(
            waiting["totalSize"], 1,
            "{binding}: counted after the filter"
        );
        assert_eq!(
            status_text(&waiting["tasks"][0]),
            "Approve purchase of gpu?"
        );
        assert_eq!(
            ids(listed(&out[4])),
            [again.as_str(), signing.as_str()],
            "{binding}"
        );
        let none = listed(&out[5]);
        assert_eq!(ids(none), Vec::<String>::new(), "{binding}");
        assert_eq!(none["totalSize"], 0, "{binding}");
        assert_eq!(none["nextPageToken"], "", "{binding}");

        let short = listed(&out[6]);
        for task in short["tasks"].as_array().into_iter().flatten() {
            let history = task["history"].as_array().map_or(0, Vec::len);
            assert_eq!(history, 1, "{binding}: historyLength 1: {task}");
            let artifacts = task["artifacts"].as_array().map_or(0, Vec::len);
            assert_eq!(artifacts, 1, "{binding}: the result, asked for: {task}");
        }
        for task in listed(&out[7])["tasks"].as_array().into_iter().flatten() {
            assert!(
                task["history"].as_array().is_none_or(Vec::is_empty),
                "{binding}: historyLength 0: {task}"
            );
        }

        for (step, size, count) in [(8, 1, 4), (9, 3, 2)] {
            let pages = out[step]["pages"].as_array().cloned().unwrap_or_default();
            assert_eq!(pages.len(), count, "{binding}: {}", out[step]);
            let walked: Vec<String> = pages.iter().flat_map(ids).collect();
            assert_eq!(walked, newest_first, "{binding}: every task once, in order");
            for (i, page) in pages.iter().enumerate() {
                assert_eq!(page["pageSize"], size, "{binding}");
                assert_eq!(page["totalSize"], 4, "{binding}");
                let last = i + 1 == pages.len();
                assert_eq!(page["nextPageToken"] == "", last, "{binding}: {page}");
            }
        }
        let pages = out[10]["pages"].as_array().cloned().unwrap_or_default();
        let walked: Vec<String> = pages.iter().flat_map(ids).collect();
        assert_eq!(
            walked,
            [again.as_str(), greeted.as_str()],
            "{binding}: filtered pages"
        );
        assert_eq!(pages.len(), 2, "{binding}: {pages:?}");
    }
}

/// A JSON-RPC `ListTasks` as the holder of `token` (none: anonymous), and its response.
async fn rpc(agent: &Agent, token: Option<&str>, params: Value) -> (u16, Value) {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params});
    let mut request = reqwest::Client::new().post(&agent.url).json(&call);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// `GET /tasks?query` as the holder of `token` (none: anonymous), and its response.
async fn get(agent: &Agent, token: Option<&str>, query: &str) -> (u16, Value) {
    let url = format!("{}tasks?{query}", agent.url);
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn nobody_lists_anothers_tasks_whatever_they_send(db: TestDb) {
    let (agent, _model) = shop(&db, A2aServerBuilder::allow_anonymous).await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu", "token": "partner-token"}},
            {"send": {"text": "hello", "token": "partner-token"}},
            {"send": {"text": "hello"}},
        ]),
    )
    .await;
    let partners = [id(&out[1]), id(&out[0])];
    let anonymous = id(&out[2]);
    let context = task_of(&out[0])["contextId"].clone();

    // The partner sees their two; the anonymous stand-in, its own one.
    let (_, theirs) = rpc(&agent, Some("partner-token"), json!({})).await;
    assert_eq!(ids(&theirs["result"]), partners, "{theirs}");
    // On the wire, a task listed without includeArtifacts has no artifacts key at all.
    let done = &theirs["result"]["tasks"][0];
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(done.get("artifacts"), None, "{done}");
    let (_, with) = rpc(
        &agent,
        Some("partner-token"),
        json!({"includeArtifacts": true}),
    )
    .await;
    let artifacts = &with["result"]["tasks"][0]["artifacts"];
    assert_eq!(artifacts.as_array().map(Vec::len), Some(1), "{with}");
    let (status, own) = get(&agent, None, "").await;
    assert_eq!(status, 200, "{own}");
    assert_eq!(ids(&own), [anonymous.as_str()], "{own}");

    // The stranger asks every way they can: by the partner's context, with a token made
    // to point anywhere, with a page of the partner's; they list nothing of the partner's.
    let forged = {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("99999999999999:zzzz")
    };
    assert!(toolnexus_inbox::RecordCursor::from_token(&forged).is_some());
    let (_, first) = rpc(&agent, Some("partner-token"), json!({"pageSize": 1})).await;
    let partners_token = first["result"]["nextPageToken"].clone();
    assert!(partners_token.as_str().is_some_and(|t| !t.is_empty()));
    for params in [
        json!({}),
        json!({"contextId": context}),
        json!({"pageToken": forged}),
        json!({"pageToken": partners_token}),
        json!({"status": "TASK_STATE_INPUT_REQUIRED"}),
    ] {
        let (_, got) = rpc(&agent, Some("eve-token"), params.clone()).await;
        assert_eq!(ids(&got["result"]), Vec::<String>::new(), "{params}: {got}");
        assert_eq!(got["result"]["totalSize"], 0, "{params}: {got}");
        assert_eq!(got["result"]["nextPageToken"], "", "{params}: {got}");
    }
    let query = format!("contextId={}", context.as_str().unwrap_or_default());
    let (status, got) = get(&agent, Some("eve-token"), &query).await;
    assert_eq!((status, ids(&got)), (200, Vec::new()), "{got}");

    // Finance, who may approve the purchase, lists it while it waits: its question, not
    // the partner's conversation, nor the partner's other task.
    let (_, approving) = rpc(&agent, Some("finance-token"), json!({})).await;
    assert_eq!(
        ids(&approving["result"]),
        [partners[1].as_str()],
        "{approving}"
    );
    let question = &approving["result"]["tasks"][0];
    assert_eq!(state(question), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(question["history"], json!([]), "{question}");
    assert_eq!(status_text(question), "Approve purchase of gpu?");

    // Without allow_anonymous, a caller the door does not know lists nothing: 401.
    let db2 = TestDb::sqlite();
    let (closed, _model) = shop(&db2, |s| s).await;
    let (status, _) = rpc(&closed, None, json!({})).await;
    assert_eq!(status, 401);
    let (status, _) = get(&closed, None, "").await;
    assert_eq!(status, 401);
}

async fn bad_list_requests_get_invalid_params_on_both_bindings(db: TestDb) {
    let (agent, _model) = shop(&db, |s| s).await;
    let partner = Some("partner-token");
    // No params at all asks for the first page; every field of the response is there.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"});
    let response = reqwest::Client::new()
        .post(&agent.url)
        .bearer_auth("partner-token")
        .json(&call)
        .send()
        .await
        .expect("an answer");
    let body: Value = response.json().await.expect("JSON");
    let expected = json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0});
    assert_eq!(body["result"], expected, "{body}");
    let (status, body) = get(&agent, partner, "pageSize=7").await;
    assert_eq!(status, 200);
    let expected = json!({"tasks": [], "nextPageToken": "", "pageSize": 7, "totalSize": 0});
    assert_eq!(body, expected);

    let cases = [
        (json!({"pageSize": 0}), "pageSize=0"),
        (json!({"pageSize": 101}), "pageSize=101"),
        (json!({"pageSize": -3}), "pageSize=-3"),
        (json!({"pageSize": "many"}), "pageSize=many"),
        (
            json!({"pageToken": "not a token!"}),
            "pageToken=not%20a%20token%21",
        ),
        (json!({"pageToken": "bm8gY29sb24"}), "pageToken=bm8gY29sb24"),
        (
            json!({"status": "TASK_STATE_RUNNING"}),
            "status=TASK_STATE_RUNNING",
        ),
        (json!({"historyLength": -5}), "historyLength=-5"),
        (
            json!({"statusTimestampAfter": "yesterday"}),
            "statusTimestampAfter=yesterday",
        ),
        (json!({"includeArtifacts": "yes"}), "includeArtifacts=yes"),
    ];
    for (params, query) in cases {
        let (status, body) = rpc(&agent, partner, params.clone()).await;
        assert_eq!(status, 200, "JSON-RPC errors go out with HTTP 200");
        assert_eq!(body["error"]["code"], -32602, "{params}: {body}");
        let said = body["error"]["message"].as_str().unwrap_or_default();
        assert!(!said.is_empty(), "{params}: {body}");

        let (status, body) = get(&agent, partner, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT", "{query}");
        assert_eq!(
            body["error"]["details"][0]["reason"], "INVALID_PARAMS",
            "{query}: {body}"
        );
    }
}

async fn a_task_answered_last_is_listed_first(db: TestDb) {
    let (agent, _model) = shop(&db, |s| s).await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu", "token": "partner-token"}},
            {"send": {"text": "hello", "token": "partner-token"}},
            {"list": {"token": "partner-token"}},
            {"list": {"token": "finance-token"}},
            {"send": {"text": "approve", "task": "$task", "token": "finance-token"}},
            {"list": {"token": "partner-token"}},
            {"list": {"token": "finance-token"}},
        ]),
    )
    .await;
    let (buying, greeted) = (id(&out[0]), id(&out[1]));
    assert_eq!(ids(listed(&out[2])), [greeted.as_str(), buying.as_str()]);
    // Finance lists the purchase while it waits for them, and not once it is approved.
    assert_eq!(ids(listed(&out[3])), [buying.as_str()]);
    assert_eq!(
        state(task_of(&out[4])),
        "TASK_STATE_COMPLETED",
        "{}",
        out[4]
    );
    assert_eq!(ids(listed(&out[6])), Vec::<String>::new());
    let after = listed(&out[5]);
    assert_eq!(ids(after), [buying.as_str(), greeted.as_str()], "{after}");
    // Newest status first: the order the timestamps say.
    let at = |i: usize| {
        let stamp = after["tasks"][i]["status"]["timestamp"].as_str();
        stamp.and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
    };
    assert!(at(0).is_some() && at(0) >= at(1), "{after}");
}
