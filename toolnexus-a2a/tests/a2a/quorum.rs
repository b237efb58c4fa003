//! An approval that needs two people of finance, given through two doors at once: one
//! person on A2A (signed in by bearer token), another on the inbox page. The run resumes
//! once and buys once; one person never counts twice; the task's status says how far the
//! approvals came.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::{Approval, LlmClient, Toolkit};
use toolnexus_a2a::A2aServer;
use toolnexus_inbox::web::InboxPage;
use toolnexus_inbox::{BearerTokens, Inbox, Person};

use crate::shop_agent::{counting_purchase, model};
use crate::support::{approve_on_the_page_as, drive, state, status_data, task_of, within, TestDb};

/// Who signs in to the A2A door, by token.
const PEOPLE: &str = "ada-token ada@example.com finance\ncarol-token carol@example.com finance";

/// The shop's purchase, behind an approval two distinct people of finance must give.
fn toolkit(purchases: Arc<AtomicUsize>) -> Toolkit {
    Toolkit::builder()
        .tool(counting_purchase(purchases))
        .approval(
            Approval::tools(["purchase"])
                .responders(["group:finance"])
                .quorum(2),
        )
        .build()
        .expect("the toolkit builds")
}

/// The A2A door and the inbox page over one inbox, a worker resuming what the page
/// completes; their addresses.
struct Doors {
    agent: String,
    page: String,
    inbox: Inbox,
    purchases: Arc<AtomicUsize>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Doors {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn doors(db: &TestDb, llm: &toolnexus::testing::MockLlm) -> Doors {
    let inbox = Inbox::builder(&db.url)
        .poll_interval(Duration::from_millis(20))
        .open()
        .await
        .expect("the inbox opens");
    let client = LlmClient::builder()
        .base_url(llm.base_url())
        .model("scripted")
        .api_key("test-key")
        .build()
        .expect("a client");
    let purchases = Arc::new(AtomicUsize::new(0));
    let tk = toolkit(purchases.clone());
    let serve = |router: axum::Router, listener: tokio::net::TcpListener| {
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        })
    };
    let a2a = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let agent = format!("http://{}/", a2a.local_addr().unwrap());
    let server = A2aServer::builder(client.clone(), tk.clone(), inbox.clone())
        .name("Shop")
        .description("Buys things once two people of finance approve")
        .url(&agent)
        .identify(BearerTokens::parse(PEOPLE).expect("the token lines"))
        .build()
        .expect("the server builds");
    let page = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page_host = page.local_addr().unwrap().to_string();
    let bob = Person::new("bob@example.com").groups(["finance"]);
    let ada = Person::new("ada@example.com").groups(["finance"]);
    let site = InboxPage::builder(inbox.clone())
        .token_for(bob, "bob-token")
        .token_for(ada, "ada-page-token")
        .router();
    let worker = inbox.worker(client, tk);
    let tasks = vec![
        serve(server.router(), a2a),
        serve(site, page),
        tokio::spawn(async move {
            worker.run(std::future::pending::<()>()).await;
        }),
    ];
    Doors {
        agent,
        page: page_host,
        inbox,
        purchases,
        tasks,
    }
}

/// Starts a purchase on A2A as Ada; the task and the request it waits on.
async fn started(doors: &Doors, item: &str) -> (String, String) {
    let text = format!("buy a {item}");
    let out = drive(
        &doors.agent,
        json!([{"send": {"text": text, "token": "ada-token"}}]),
    )
    .await;
    let task = task_of(&out[0]);
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let request = status_data(task)[0]["id"].as_str().unwrap().to_owned();
    (task["id"].as_str().unwrap().to_owned(), request)
}

fn approve(task: &str, token: &str) -> Value {
    json!({"send": {"text": "approve", "task": task, "token": token}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn approvals_racing_from_the_page_and_from_a2a_resume_once() {
    let db = TestDb::sqlite();
    let llm = model().await;
    let doors = doors(&db, &llm).await;
    let (task, request) = started(&doors, "gpu").await;

    let (page, a2a) = tokio::join!(
        approve_on_the_page_as(&doors.page, "bob-token", &request),
        drive(&doors.agent, json!([approve(&task, "ada-token")]))
    );
    assert_eq!(page, 303, "the page took Bob's approval");
    assert!(a2a[0].get("task").is_some(), "A2A took Ada's: {}", a2a[0]);
    let done = within(Duration::from_secs(60), || async {
        let parked = doors.inbox.get(&request).await.unwrap()?;
        (parked.run_state == toolnexus_inbox::ParkedState::Done).then_some(parked)
    })
    .await
    .expect("the run ends");
    assert_eq!(doors.purchases.load(Ordering::SeqCst), 1, "one purchase");
    let mut who: Vec<String> = done.votes.iter().map(|v| v.label()).collect();
    who.sort();
    assert_eq!(who, ["ada@example.com", "bob@example.com"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_person_counts_once_across_doors_and_the_status_says_how_far() {
    let db = TestDb::sqlite();
    let llm = model().await;
    let doors = doors(&db, &llm).await;
    let (task, request) = started(&doors, "desk").await;

    let first = drive(&doors.agent, json!([approve(&task, "ada-token")])).await;
    let waiting = task_of(&first[0]);
    assert_eq!(state(waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    let asked = &status_data(waiting)[0];
    assert_eq!(asked["id"], request.as_str());
    // Protobuf's `Struct` carries numbers as doubles.
    let approvals = &asked["data"]["approvals"];
    assert_eq!(approvals["count"].as_f64(), Some(1.0), "{asked}");
    assert_eq!(approvals["quorum"].as_f64(), Some(2.0), "{asked}");
    assert_eq!(approvals["by"], json!(["ada@example.com"]), "{asked}");
    // Ada again, on the page this time: she counts already.
    assert_eq!(
        approve_on_the_page_as(&doors.page, "ada-page-token", &request).await,
        0,
        "the page offers Ada no form"
    );
    let again = drive(&doors.agent, json!([approve(&task, "ada-token")])).await;
    assert_eq!(
        again[0]["error"], "UnsupportedOperationError",
        "{}",
        again[0]
    );
    assert_eq!(doors.purchases.load(Ordering::SeqCst), 0);

    let second = drive(&doors.agent, json!([approve(&task, "carol-token")])).await;
    let done = task_of(&second[0]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(doors.purchases.load(Ordering::SeqCst), 1);
}
