//! Webhooks: a parked run tells a receiver on loopback, signed as Standard Webhooks sign
//! (verified by the reference Python package), retried with backoff until it is taken,
//! once per id, and delivered from the outbox even when the process that parked it died
//! mid-delivery.

use std::process::Stdio;
use std::time::Duration;

use toolnexus::Answer;
use toolnexus_inbox::{AuditKind, DeliveryState, Event, Inbox, ParkedState, Webhook};
use toolnexus_test_support::wait;

use crate::receiver::{verify_with_reference, Receiver};
use crate::support::{both_engines, InboxDb, Scene, TestDb};

/// The example secret of the Standard Webhooks specification.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const PAGE: &str = "https://inbox.example.com/team/";

both_engines!(
    a_run_is_told_from_park_to_outcome_signed_as_the_reference_verifies,
    a_webhook_failing_twice_gets_the_notification_on_the_third_try_once,
    a_process_killed_before_its_delivery_is_taken_still_notifies_after_restart,
    racing_deliverers_send_each_notification_once,
);

async fn a_run_is_told_from_park_to_outcome_signed_as_the_reference_verifies(db: TestDb) {
    let hook = Receiver::start([]).await;
    let every = [Event::Parked, Event::Answered, Event::Resumed];
    let inbox = db
        .builder()
        .agent("purchasing")
        .webhook(
            Webhook::new(&hook.url)
                .name("team")
                .secret(SECRET)
                .events(every),
        )
        .page_url(PAGE)
        .open()
        .await
        .unwrap();
    let s = Scene::new(inbox).await;
    let stop = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(s.inbox.worker(s.client.clone(), s.tk.clone()).run(async {
        let _ = stop.1.await;
    }));

    // The worker delivers this process's notification at once, without waiting to poll.
    let id = s.park("gpu").await;
    hook.wait_for(1).await;
    let parked = hook.attempts()[0].json();
    assert_eq!(parked["type"], "run.parked");
    assert_eq!(parked["data"]["agent"], "purchasing");
    assert_eq!(parked["data"]["run"], id.as_str());
    let link = format!("{PAGE}r/{id}");
    assert_eq!(parked["data"]["link"], link.as_str());
    let request = &parked["data"]["requests"][0];
    assert_eq!(request["id"], id.as_str());
    assert_eq!(request["kind"], "approval");
    assert_eq!(request["prompt"], "Approve purchase of gpu?");
    assert_eq!(request["tool"]["name"], "approve_purchase");
    assert_eq!(request["tool"]["args"]["item"], "gpu");
    // Slack's incoming webhooks read `text`, with `<url|label>` links.
    let text = parked["text"].as_str().unwrap();
    assert!(
        text.contains("*purchasing* waits for a person: Approve purchase of gpu?"),
        "{text}"
    );
    assert!(text.contains(&format!("<{link}|")), "{text}");

    s.inbox
        .answer_as(Answer::ok(&id), "ada@example.com")
        .await
        .unwrap();
    hook.wait_for(3).await;
    let answered = hook.of_type("request.answered");
    assert_eq!(answered.len(), 1);
    let answered = answered[0].json();
    assert_eq!(answered["data"]["answeredBy"], "ada@example.com");
    assert_eq!(answered["data"]["answer"]["ok"], true);
    assert_eq!(answered["data"]["request"]["id"], id.as_str());
    let resumed = hook.of_type("run.resumed");
    assert_eq!(resumed.len(), 1);
    let resumed = resumed[0].json();
    assert_eq!(resumed["data"]["outcome"], "done");
    assert_eq!(resumed["data"]["text"], "outcome: approved: gpu");
    let _ = stop.0.send(());
    let report = worker.await.unwrap();
    assert_eq!((report.resumed, report.notified), (1, 3));

    // The reference implementation accepts every attempt, and refuses a body changed by
    // one character.
    let got = hook.attempts();
    assert_eq!(verify_with_reference(SECRET, &got), ["ok", "ok", "ok"]);
    let mut forged = got[0].clone();
    forged.body = forged.body.replace("gpu", "gpU");
    let verdict = verify_with_reference(SECRET, &[forged]);
    assert!(
        verdict[0].starts_with("WebhookVerificationError"),
        "{verdict:?}"
    );

    // Each delivery is on record, and the trail says who was told.
    let deliveries = s.inbox.deliveries(&id).await.unwrap();
    let seen: Vec<_> = deliveries
        .iter()
        .map(|d| (d.event, d.state, d.attempts, d.last_status))
        .collect();
    let delivered = |e| (e, DeliveryState::Delivered, 1, Some(200));
    assert_eq!(
        seen,
        [
            delivered(Event::Parked),
            delivered(Event::Answered),
            delivered(Event::Resumed)
        ]
    );
    let ids: Vec<_> = deliveries.iter().map(|d| d.id.clone()).collect();
    assert_eq!(ids, hook.distinct());
    let trail = s.inbox.audit(&id).await.unwrap();
    let notified: Vec<_> = trail
        .iter()
        .filter(|e| e.kind == AuditKind::Notified)
        .map(|e| (e.actor.as_deref(), e.detail.as_deref()))
        .collect();
    assert_eq!(
        notified,
        [
            (Some("team"), Some("run.parked to team")),
            (Some("team"), Some("request.answered to team")),
            (Some("team"), Some("run.resumed to team")),
        ]
    );
}

async fn a_webhook_failing_twice_gets_the_notification_on_the_third_try_once(db: TestDb) {
    let hook = Receiver::start([500, 500]).await;
    let clock = &db.clock;
    let inbox = db
        .builder()
        .webhook(
            Webhook::new(&hook.url)
                .secret(SECRET)
                .retries(5, Duration::from_secs(10)),
        )
        .open()
        .await
        .unwrap();
    let s = Scene::new(inbox).await;
    let id = s.park("gpu").await;

    assert_eq!(s.inbox.deliver_due().await.unwrap(), 0);
    let first = &s.inbox.deliveries(&id).await.unwrap()[0];
    assert_eq!((first.state, first.attempts), (DeliveryState::Pending, 1));
    assert_eq!(
        (first.last_status, first.last_error.as_deref()),
        (Some(500), Some("HTTP 500"))
    );
    // Not due again before its backoff: 10 s after the first failure, then 20 s.
    assert_eq!(s.inbox.deliver_due().await.unwrap(), 0);
    assert_eq!(hook.attempts().len(), 1);
    clock.advance(Duration::from_secs(10));
    assert_eq!(s.inbox.deliver_due().await.unwrap(), 0);
    clock.advance(Duration::from_secs(10));
    assert_eq!(
        s.inbox.deliver_due().await.unwrap(),
        0,
        "10 of the 20 s after the second"
    );
    clock.advance(Duration::from_secs(10));
    assert_eq!(s.inbox.deliver_due().await.unwrap(), 1);
    clock.advance(Duration::from_secs(3600));
    assert_eq!(s.inbox.deliver_due().await.unwrap(), 0, "delivered once");

    let got = hook.attempts();
    assert_eq!(got.len(), 3);
    assert_eq!(hook.distinct().len(), 1, "one id on every attempt: {got:?}");
    assert_eq!(got[0].body, got[2].body, "the same notification each time");
    assert_eq!(verify_with_reference(SECRET, &got), ["ok", "ok", "ok"]);
    let delivery = &s.inbox.deliveries(&id).await.unwrap()[0];
    assert_eq!(
        (delivery.state, delivery.attempts, delivery.last_status),
        (DeliveryState::Delivered, 3, Some(200))
    );
    assert!(delivery.delivered_at.is_some() && delivery.next_attempt_at.is_none());
}

async fn a_process_killed_before_its_delivery_is_taken_still_notifies_after_restart(db: TestDb) {
    // The receiver takes each attempt and never answers, so the example is surely
    // mid-delivery, its notification not yet recorded as delivered, when it is killed.
    let hook = Receiver::start([]).await;
    hook.hold(true);
    let mut child = crate::example_bin::command("inbox")
        .args(["--port", "0", "--db", &db.url])
        .args(["--webhook", &hook.url, "--webhook-secret", SECRET])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("the example starts");
    // Killed either way: the assertion below says whether it had tried by then.
    wait::within(Duration::from_secs(120), || async {
        (!hook.attempts().is_empty()).then_some(())
    })
    .await;
    child.kill().expect("SIGKILL the example");
    let _ = child.wait();
    let in_flight = hook.attempts();
    assert!(!in_flight.is_empty(), "the example never tried to notify");

    // A new process with the same webhook, once the dead one's claim has lapsed.
    hook.hold(false);
    let clock = &db.clock;
    clock.advance(Duration::from_secs(60));
    let inbox: Inbox = db
        .builder()
        .webhook(Webhook::new(&hook.url).secret(SECRET))
        .open()
        .await
        .unwrap();
    let waiting = inbox.waiting().await.unwrap();
    assert_eq!(waiting.len(), 3, "the example parked its three runs");
    assert_eq!(inbox.deliver_due().await.unwrap(), 3);
    assert_eq!(inbox.deliver_due().await.unwrap(), 0);

    // Every run's notification arrived; the one in flight at the kill came again under
    // its id, which is how the receiver knows it is the same.
    let ids = hook.distinct();
    assert_eq!(ids.len(), 3, "{:?}", hook.attempts());
    let again = hook
        .attempts()
        .iter()
        .filter(|a| a.id == in_flight[0].id)
        .count();
    assert_eq!(again, 2);
    assert!(verify_with_reference(SECRET, &hook.attempts())
        .iter()
        .all(|v| v == "ok"));
    for parked in &waiting {
        assert_eq!(parked.state, ParkedState::Waiting);
        let deliveries = inbox.deliveries(parked.id()).await.unwrap();
        assert_eq!(deliveries.len(), 1);
        assert_eq!(deliveries[0].state, DeliveryState::Delivered);
        assert_eq!(deliveries[0].event, Event::Parked);
    }
}

async fn racing_deliverers_send_each_notification_once(db: TestDb) {
    let hook = Receiver::start([]).await;
    let open = || async {
        db.builder()
            .webhook(Webhook::new(&hook.url).secret(SECRET))
            .open()
            .await
            .unwrap()
    };
    let s = Scene::new(open().await).await;
    for n in 0..40 {
        s.park(&format!("item-{n}")).await;
    }
    // Four processes' deliverers at once, each on its own pool.
    let deliverers = [open().await, open().await, open().await, open().await];
    let delivered = futures::future::try_join_all(deliverers.iter().map(Inbox::deliver_due))
        .await
        .unwrap();
    assert_eq!(delivered.iter().sum::<usize>(), 40, "{delivered:?}");
    assert_eq!(hook.attempts().len(), 40, "no notification sent twice");
    assert_eq!(hook.distinct().len(), 40);
}
