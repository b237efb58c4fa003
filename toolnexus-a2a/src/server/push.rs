//! Push notifications: a task's push configurations, kept in the inbox beside the task,
//! and the pusher that tells each configuration's webhook of every status the task comes
//! to (and, once it ended, what it produced), as `StreamResponse`s, through the inbox's
//! durable posts ([`Inbox::post`]): at least once, in order per configuration, and after a
//! restart of the server too.
//!
//! Only a task's starter manages its configurations; the notifications show the task as
//! they see it. Once the task is over its last status is told and its configurations,
//! with their tokens, are dropped; one given after the end is told nothing and kept, as
//! set, until its setter deletes it.

use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use a2a::{
    A2AError, AuthenticationInfo, DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, Task, TaskPushNotificationConfig,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolnexus_inbox::{Door, Inbox, Person, Post, RecordQuery, Sight};

use super::errors::to_protocol;
use super::shared::Shared;

/// Where a task's push configurations are kept: a door record of their own beside the
/// task's, so the task's own writes never race with them.
const DOOR: Door = Door::named("a2a-push");

/// How often the pusher looks at the tasks it watches where changes made elsewhere (a
/// worker, another server) are not announced; changes the inbox signals wake it at once.
const POLL: Duration = Duration::from_millis(500);

/// The most configurations one task may have.
const MAX_CONFIGS: usize = 16;

/// The content type of a notification's body, as the specification has it.
const CONTENT_TYPE: &str = "application/a2a+json";

/// The header a configuration's token travels in, as the official SDKs send and read it.
const TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// A task's push configurations and what was last told of it.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pushes {
    /// Whom the notifications show the task as: its starter, who set them.
    owner: Owner,
    configs: Vec<TaskPushNotificationConfig>,
    /// The last status told, so a restarted server tells nothing twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    told: Option<Told>,
    /// How many statuses were told: part of each notification's id.
    #[serde(default)]
    count: u64,
    /// `"on"` while there are configurations: what a restarted server looks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    watch: Option<String>,
}

// The configurations hold their webhooks' tokens and credentials: never shown.
impl fmt::Debug for Pushes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pushes")
            .field("owner", &self.owner.id)
            .field("configs", &self.configs.len())
            .field("told", &self.told)
            .finish_non_exhaustive()
    }
}

/// A person as a record keeps them.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Owner {
    id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    groups: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    stand_in: bool,
}

impl Owner {
    fn of(who: &Person) -> Owner {
        Owner {
            id: who.id.clone(),
            groups: who.groups.clone(),
            stand_in: !who.is_identified(),
        }
    }

    fn person(&self) -> Person {
        match self.stand_in {
            true => Person::stand_in(self.id.clone()),
            false => Person::new(self.id.clone()).groups(self.groups.clone()),
        }
    }
}

/// A status as told: its state and the message it came with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Told {
    state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl Told {
    fn of(task: &Task) -> Told {
        let state = serde_json::to_value(&task.status.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Told {
            state,
            message: task.status.message.as_ref().map(|m| m.message_id.clone()),
        }
    }
}

/// Runs the pusher of `shared` until the server is dropped: first the tasks an earlier
/// run of the server watched, then every change.
pub(crate) fn start(shared: &Arc<Shared>) {
    // Without a runtime (a server built outside one) the first configuration starts it.
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if shared
        .push_started
        .swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        return;
    }
    runtime.spawn(run(Arc::downgrade(shared)));
}

async fn run(shared: Weak<Shared>) {
    if let Some(shared) = shared.upgrade()
        && let Err(e) = resume_watching(&shared).await
    {
        tracing::warn!(error = %e, "the tasks to tell of could not be read; new ones are told");
    }
    let Some(mut changes) = shared.upgrade().map(|s| s.inbox.changes()) else {
        return;
    };
    loop {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let every = shared.look_every(POLL);
        let woken = shared.changed.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        for id in shared.pusher.watched() {
            if let Err(e) = tell(&shared, &id).await {
                tracing::warn!(task = %id, error = %e, "a task's change could not be told");
            }
        }
        // The server is held only for this wait; once its owner drops it, the next look
        // finds it gone and the pusher ends.
        tokio::select! {
            _ = woken => {}
            // The server held here holds the inbox, whose signal so cannot close.
            _ = changes.changed() => {}
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// Watches again the tasks that still have configurations, as a server kept them.
async fn resume_watching(shared: &Shared) -> Result<(), A2AError> {
    let query = RecordQuery::new(DOOR).field("watch", "on");
    let mut after = None;
    loop {
        let page = shared
            .inbox
            .records::<Value>(&query, after.as_ref(), 100)
            .await
            .map_err(|e| A2AError::internal(e.to_string()))?;
        let Some(last) = page.last() else {
            return Ok(());
        };
        after = Some(last.cursor().clone());
        for listed in &page {
            shared.pusher.watch(&listed.id);
        }
    }
}

/// Tells task `id`'s configurations of its status when it changed since last told; once
/// the task is over, drops them.
async fn tell(shared: &Shared, id: &str) -> Result<(), A2AError> {
    let _write = shared.pusher.writes.lock().await;
    let Some(mut pushes) = load(&shared.inbox, id).await? else {
        shared.pusher.unwatch(id);
        return Ok(());
    };
    if pushes.configs.is_empty() {
        shared.pusher.unwatch(id);
        return Ok(());
    }
    let who = pushes.owner.person();
    let task = match shared.task_as(id, Some(0), &who, Sight::Whole).await {
        Ok(task) => task,
        Err(e) if e.code == a2a::error_code::TASK_NOT_FOUND => {
            shared.pusher.unwatch(id);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let now = Told::of(&task);
    let over = task.status.state.is_terminal();
    if pushes.told.as_ref() != Some(&now) {
        let events = super::events::change_events(&task);
        for config in &pushes.configs {
            let config_id = config.id.as_deref().unwrap_or(id);
            for (n, event) in events.iter().enumerate() {
                let post = notification(id, config, &event.to_string());
                // The id names the status told, so telling it again after a restart
                // between the post and the record's keeping writes nothing new.
                let post_id = format!(
                    "a2a-push:{id}:{config_id}:{}:{}:{}:{n}",
                    pushes.count,
                    now.state,
                    now.message.as_deref().unwrap_or("")
                );
                shared
                    .inbox
                    .post(&post_id, post)
                    .await
                    .map_err(to_protocol_inbox)?;
            }
        }
        pushes.told = Some(now);
        pushes.count += 1;
    }
    if over {
        // What is left of an ended task's configurations are their tokens: not kept.
        pushes.configs.clear();
        pushes.watch = None;
        shared.pusher.unwatch(id);
    }
    save(&shared.inbox, id, &pushes).await
}

/// The post telling `config` of a change, `body` being its `StreamResponse`.
fn notification(task: &str, config: &TaskPushNotificationConfig, body: &str) -> Post {
    let mut headers = Vec::new();
    if let Some(token) = config.token.as_deref().filter(|t| !t.is_empty()) {
        headers.push((TOKEN_HEADER.to_owned(), token.to_owned()));
    }
    if let Some(AuthenticationInfo {
        scheme,
        credentials: Some(credentials),
    }) = &config.authentication
    {
        headers.push((
            "Authorization".to_owned(),
            format!("{scheme} {credentials}"),
        ));
    }
    let config_id = config.id.as_deref().unwrap_or(task);
    Post {
        series: format!("a2a-push:{task}:{config_id}"),
        url: config.url.clone(),
        headers,
        content_type: CONTENT_TYPE.to_owned(),
        body: body.to_owned(),
    }
}

/// `CreateTaskPushNotificationConfig`: adds `config` to its task, or replaces the one with
/// its id (the task's id when it names none). Only the task's starter may.
pub(crate) async fn create(
    shared: &Arc<Shared>,
    config: TaskPushNotificationConfig,
    who: &Person,
) -> Result<Value, A2AError> {
    enabled(shared)?;
    let id = config.task_id.clone();
    owned(shared, &id, who).await?;
    let config = normalized(&id, config)?;
    keep(shared, &id, config.clone(), who).await?;
    to_value(&config)
}

/// Checks `config` before a message that carries it is taken: push notifications are
/// served and its URL is one to post to.
pub(crate) fn check_inline(
    shared: &Shared,
    config: Option<&TaskPushNotificationConfig>,
) -> Result<(), A2AError> {
    let Some(config) = config else {
        return Ok(());
    };
    enabled(shared)?;
    check_url(&config.url)
}

/// Keeps the configuration a message carried for the task it started or continued.
pub(crate) async fn keep_inline(
    shared: &Arc<Shared>,
    task: &str,
    config: Option<TaskPushNotificationConfig>,
    who: &Person,
) -> Result<(), A2AError> {
    let Some(config) = config else {
        return Ok(());
    };
    let config = normalized(task, config)?;
    keep(shared, task, config, who).await
}

/// `GetTaskPushNotificationConfig`: one of its task's configurations.
pub(crate) async fn get(
    shared: &Arc<Shared>,
    request: GetTaskPushNotificationConfigRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    enabled(shared)?;
    owned(shared, &request.task_id, who).await?;
    let pushes = load(&shared.inbox, &request.task_id).await?;
    let found = pushes
        .into_iter()
        .flat_map(|p| p.configs)
        .find(|c| c.id.as_deref() == Some(request.id.as_str()));
    match found {
        Some(config) => to_value(&config),
        // As the official SDKs answer an unknown configuration.
        None => Err(A2AError::task_not_found(&request.task_id)),
    }
}

/// `ListTaskPushNotificationConfigs`: every configuration of its task, on one page.
pub(crate) async fn list(
    shared: &Arc<Shared>,
    request: ListTaskPushNotificationConfigsRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    enabled(shared)?;
    if request.page_size.is_some_and(|n| n < 0) {
        return Err(A2AError::invalid_params("pageSize must not be negative"));
    }
    owned(shared, &request.task_id, who).await?;
    let configs = load(&shared.inbox, &request.task_id)
        .await?
        .map(|p| p.configs)
        .unwrap_or_default();
    // At most MAX_CONFIGS: one page holds them all, and says so with an empty token.
    let response = ListTaskPushNotificationConfigsResponse {
        configs,
        next_page_token: Some(String::new()),
    };
    serde_json::to_value(response).map_err(|e| A2AError::internal(e.to_string()))
}

/// `DeleteTaskPushNotificationConfig`: drops one of its task's configurations and the
/// notifications not yet delivered to it.
pub(crate) async fn delete(
    shared: &Arc<Shared>,
    request: DeleteTaskPushNotificationConfigRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    enabled(shared)?;
    owned(shared, &request.task_id, who).await?;
    let id = &request.task_id;
    let _write = shared.pusher.writes.lock().await;
    if let Some(mut pushes) = load(&shared.inbox, id).await? {
        let before = pushes.configs.len();
        pushes
            .configs
            .retain(|c| c.id.as_deref() != Some(request.id.as_str()));
        if pushes.configs.len() != before {
            if pushes.configs.is_empty() {
                pushes.watch = None;
            }
            save(&shared.inbox, id, &pushes).await?;
            let series = format!("a2a-push:{id}:{}", request.id);
            shared
                .inbox
                .drop_posts(&series)
                .await
                .map_err(to_protocol_inbox)?;
        }
    }
    Ok(json!({}))
}

/// Refuses every push operation of a server that does not declare them.
pub(crate) fn enabled(shared: &Shared) -> Result<(), A2AError> {
    match shared.card.push {
        true => Ok(()),
        false => Err(A2AError::push_notification_not_supported()),
    }
}

/// Checks that `who` started task `id`: anyone else, an approver included, is told there
/// is no such task, as for every operation on a task that is none of their business.
async fn owned(shared: &Shared, id: &str, who: &Person) -> Result<(), A2AError> {
    let seen = shared.seen(id, who).await?;
    match seen.sight {
        Sight::Whole => Ok(()),
        Sight::Question => Err(A2AError::task_not_found(id)),
    }
}

/// `config` as kept for task `task`: its task named, its id the task's when it has none,
/// its URL one to post to.
fn normalized(
    task: &str,
    mut config: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, A2AError> {
    check_url(&config.url)?;
    check_headers(&config)?;
    config.task_id = task.to_owned();
    if config.id.as_deref().is_none_or(str::is_empty) {
        config.id = Some(task.to_owned());
    }
    config.tenant = None;
    Ok(config)
}

/// The token and the authentication travel as header values, so each must be one: a
/// configuration that could never be sent is refused now, not retried for a day.
fn check_headers(config: &TaskPushNotificationConfig) -> Result<(), A2AError> {
    let fits = |value: &str| axum::http::HeaderValue::from_str(value).is_ok();
    if config.token.as_deref().is_some_and(|t| !fits(t)) {
        return Err(A2AError::invalid_params(
            "a push notification configuration's token must be a valid HTTP header value",
        ));
    }
    if let Some(auth) = &config.authentication {
        let scheme_fits = !auth.scheme.is_empty()
            && auth
                .scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~+/".contains(c));
        let credentials = auth.credentials.as_deref().unwrap_or_default();
        if !scheme_fits || !fits(&format!("{} {credentials}", auth.scheme)) {
            return Err(A2AError::invalid_params(
                "a push notification configuration's authentication must be a scheme \
                 (a single word) and credentials that fit an HTTP header",
            ));
        }
    }
    Ok(())
}

/// An absolute `http` or `https` URL. Where it may lead (never into the server's own
/// network, unless the host allows it) is checked when each notification is posted.
fn check_url(url: &str) -> Result<(), A2AError> {
    match reqwest::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => Ok(()),
        _ => Err(A2AError::invalid_params(
            "a push notification configuration's url must be an absolute http or https URL",
        )),
    }
}

/// Adds or replaces `config` on task `task`, and watches the task.
async fn keep(
    shared: &Arc<Shared>,
    task: &str,
    config: TaskPushNotificationConfig,
    who: &Person,
) -> Result<(), A2AError> {
    {
        let _write = shared.pusher.writes.lock().await;
        let mut pushes = load(&shared.inbox, task).await?.unwrap_or_else(|| Pushes {
            owner: Owner::of(who),
            configs: Vec::new(),
            told: None,
            count: 0,
            watch: None,
        });
        pushes.configs.retain(|c| c.id != config.id);
        if pushes.configs.len() >= MAX_CONFIGS {
            return Err(A2AError::invalid_params(format!(
                "a task has at most {MAX_CONFIGS} push notification configurations"
            )));
        }
        pushes.configs.push(config);
        // A webhook given once the task is over has nothing to be told: it is kept, as
        // set, until deleted, and never dropped under its setter, who reads it next.
        let now = shared.task_as(task, Some(0), who, Sight::Whole).await?;
        if now.status.state.is_terminal() {
            pushes.told = Some(Told::of(&now));
            save(&shared.inbox, task, &pushes).await?;
            return Ok(());
        }
        pushes.watch = Some("on".to_owned());
        save(&shared.inbox, task, &pushes).await?;
    }
    shared.pusher.watch(task);
    start(shared);
    shared.changed.notify_waiters();
    Ok(())
}

async fn load(inbox: &Inbox, id: &str) -> Result<Option<Pushes>, A2AError> {
    let kept = inbox.record::<Pushes>(DOOR, id).await;
    Ok(kept.map_err(to_protocol_inbox)?.map(|k| k.data))
}

async fn save(inbox: &Inbox, id: &str, pushes: &Pushes) -> Result<(), A2AError> {
    inbox
        .keep_record(DOOR, id, pushes)
        .await
        .map_err(to_protocol_inbox)
}

fn to_value(config: &TaskPushNotificationConfig) -> Result<Value, A2AError> {
    serde_json::to_value(config).map_err(|e| A2AError::internal(e.to_string()))
}

fn to_protocol_inbox(e: toolnexus_inbox::InboxError) -> A2AError {
    to_protocol(e.into())
}
