//! When nobody answers, with a clock the test moves on: a request is escalated once, to
//! other webhooks and to more people, and at expiry each kind gets its default.

use std::time::{Duration, SystemTime};

use toolnexus::{Answer, Refusal};
use toolnexus_inbox::{
    AuditKind, DeliveryState, Escalation, Event, Expiry, InboxError, ParkedState, Responder,
    Webhook,
};

use crate::receiver::Receiver;
use crate::support::{both_engines, InboxDb, Scene, TestDb};

both_engines!(
    a_request_nobody_answers_is_escalated_once_to_other_people,
    expiry_declines_by_default_and_applies_a_kinds_own_default,
);

async fn a_request_nobody_answers_is_escalated_once_to_other_people(db: TestDb) {
    let team = Receiver::start([]).await;
    let managers = Receiver::start([]).await;
    let clock = &db.clock;
    let inbox = db
        .builder()
        .responders("approval", ["ada@example.com"])
        .webhook(Webhook::new(&team.url).name("team").events([Event::Parked]))
        .webhook(Webhook::new(&managers.url).name("managers").events([]))
        .escalate(
            Escalation::after(Duration::from_secs(30 * 60))
                .kind("approval")
                .notify(["managers"])
                .responders(["group:leads"]),
        )
        .open()
        .await
        .unwrap();
    let s = Scene::new(inbox).await;
    let id = s.park("gpu").await;
    assert_eq!(s.inbox.deliver_due().await.unwrap(), 1);
    let bob = toolnexus_inbox::Person::new("bob@example.com").groups(["leads"]);
    let refused = s.inbox.answer_as(Answer::ok(&id), &bob).await;
    assert!(
        matches!(refused, Err(InboxError::NotAllowed { .. })),
        "{refused:?}"
    );

    clock.advance(Duration::from_secs(29 * 60));
    assert_eq!(s.inbox.escalate_due().await.unwrap(), 0, "not yet due");
    clock.advance(Duration::from_secs(2 * 60));
    assert_eq!(s.inbox.escalate_due().await.unwrap(), 1);
    assert_eq!(s.inbox.escalate_due().await.unwrap(), 0, "escalated once");
    assert_eq!(s.inbox.deliver_due().await.unwrap(), 1);

    // The managers' webhook hears only of the escalation; the team's only of the park.
    let told: Vec<_> = managers.attempts().iter().map(|a| a.json()).collect();
    assert_eq!(told.len(), 1);
    assert_eq!(told[0]["type"], "request.escalated");
    assert_eq!(told[0]["data"]["request"]["id"], id.as_str());
    assert_eq!(told[0]["data"]["waitedSeconds"], 31 * 60);
    assert_eq!(told[0]["data"]["escalatedTo"][0], "group:leads");
    let text = told[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Still waiting after 31 min: Approve purchase of gpu?"),
        "{text}"
    );
    let team_got: Vec<_> = team
        .attempts()
        .iter()
        .map(|a| a.json()["type"].clone())
        .collect();
    assert_eq!(team_got, ["run.parked"]);

    // Now a lead may answer too.
    let parked = s.inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.escalated_to, [Responder::group("leads")]);
    assert!(parked.escalated_at.is_some());
    assert!(s.inbox.may_answer(&parked, Some(&bob)));
    s.inbox.answer_as(Answer::ok(&id), &bob).await.unwrap();
    let resumed = s.resume_now().await;
    assert_eq!(resumed.result.text, "outcome: approved: gpu");

    let trail: Vec<_> = s
        .inbox
        .audit(&id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.kind, e.actor))
        .collect();
    let who = |s: &str| Some(s.to_owned());
    assert_eq!(
        trail[..6],
        [
            (AuditKind::Parked, who("default")),
            (AuditKind::Notified, who("team")),
            // Bob's try before the escalation, refused and on the record.
            (AuditKind::AnswerRefused, who("bob@example.com")),
            (
                AuditKind::Escalated,
                who(&format!("worker {}", std::process::id()))
            ),
            (AuditKind::Notified, who("managers")),
            (AuditKind::Answered, who("bob@example.com")),
        ]
    );
}

async fn expiry_declines_by_default_and_applies_a_kinds_own_default(db: TestDb) {
    let hook = Receiver::start([]).await;
    let clock = &db.clock;
    // Two handles on one database, as two deployments' settings: the strict one keeps
    // the default, the other approves purchases nobody answered within the hour.
    let strict = db
        .builder()
        .expire_after("approval", Duration::from_secs(3600))
        .webhook(Webhook::new(&hook.url).events([Event::Expired]))
        .open()
        .await
        .unwrap();
    let lenient = db
        .builder()
        .expire_after("approval", Duration::from_secs(3600))
        .on_expiry("approval", Expiry::Approve)
        .open()
        .await
        .unwrap();

    // A deadline for requests that set none, written on the request.
    let s = Scene::new(strict).await;
    let declined = s.park("gpu").await;
    let parked = s.inbox.get(&declined).await.unwrap().unwrap();
    let deadline = parked.expires_at.expect("a deadline");
    let hour = deadline.duration_since(parked.parked_at).unwrap();
    assert_eq!(hour, Duration::from_secs(3600));
    assert!(parked.request.expires_at.is_some());
    assert!(deadline > SystemTime::now() + Duration::from_secs(3500));

    clock.advance(Duration::from_secs(3599));
    assert_eq!(s.inbox.expire_due().await.unwrap(), 0);
    clock.advance(Duration::from_secs(2));
    assert_eq!(s.inbox.expire_due().await.unwrap(), 1);
    let parked = s.inbox.get(&declined).await.unwrap().unwrap();
    let answer = parked.answer.unwrap();
    assert_eq!(
        (answer.ok, answer.refusal()),
        (false, Some(&Refusal::Expired))
    );
    let resumed = s.resume_now().await;
    let told_model = &resumed.result.text;
    assert!(told_model.ends_with("(reason: expired)"), "{told_model}");
    assert_eq!(s.effects.total(), 0, "nothing bought");
    assert_eq!(s.inbox.deliver_due().await.unwrap(), 1);
    let told = hook.attempts()[0].json();
    assert_eq!(told["type"], "request.expired");
    let text = told["text"].as_str().unwrap();
    assert!(
        text.starts_with("Nobody answered in time, so it was declined by default"),
        "{text}"
    );

    let l = Scene::new(lenient).await;
    let approved = l.park("ssd").await;
    clock.advance(Duration::from_secs(3601));
    assert_eq!(l.inbox.expire_due().await.unwrap(), 1);
    let resumed = l.resume_now().await;
    assert_eq!(resumed.result.text, "outcome: approved: ssd");
    assert_eq!(l.effects.count("ssd"), 1);
    let row = l.inbox.get(&approved).await.unwrap().unwrap();
    assert_eq!(row.run_state, ParkedState::Done);
    assert_eq!(row.answered_by, None, "the inbox decided, not a person");
    let trail = l.inbox.audit(&approved).await.unwrap();
    assert_eq!(trail[1].kind, AuditKind::Expired);
    assert!(trail[1]
        .detail
        .as_deref()
        .unwrap()
        .contains("approved by default"));
    // The lenient handle has no webhook; the strict one's is told of its own expiry only.
    assert!(l.inbox.deliveries(&approved).await.unwrap().is_empty());
    let strict_deliveries = s.inbox.deliveries(&declined).await.unwrap();
    assert_eq!(strict_deliveries.len(), 1);
    assert_eq!(strict_deliveries[0].state, DeliveryState::Delivered);
}
