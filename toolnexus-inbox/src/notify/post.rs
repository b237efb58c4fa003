//! Posts to URLs a caller gives at run time (an A2A task's push-notification URL, say),
//! not to a configured webhook: written durably, delivered in order within their series,
//! retried with backoff, at least once.

use std::fmt;
use std::time::SystemTime;

use super::deliver::describe;
use crate::clock::{from_ms, ms};
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::records::state::DeliveryState;
use crate::store::posts::{self, ClaimedPost, NewPost, PostAttempt, PostRow};

/// One notification to post to a URL given at run time (not a configured
/// [`Webhook`](crate::Webhook)), written with [`Inbox::post`] and delivered by the workers.
///
/// The headers carry the caller's credentials for the receiver (an A2A push
/// configuration's token, an `Authorization`): they are sent with every attempt and shown
/// nowhere else — not by `Debug`, not in [`Inbox::posts`], not in errors or logs. Neither
/// is the URL's query or user info, where a receiver's URL often keeps its own secret.
///
/// ```
/// use toolnexus_inbox::Post;
///
/// let post = Post {
///     series: "task-7".to_owned(),
///     url: "https://agent.example.com/push?key=s3cret".to_owned(),
///     headers: vec![("X-A2A-Notification-Token".to_owned(), "tok-123".to_owned())],
///     content_type: "application/a2a+json".to_owned(),
///     body: r#"{"statusUpdate":{}}"#.to_owned(),
/// };
/// let shown = format!("{post:?}");
/// assert!(shown.contains("X-A2A-Notification-Token"));
/// assert!(!shown.contains("tok-123") && !shown.contains("s3cret"));
/// ```
#[derive(Clone)]
pub struct Post {
    /// Posts of one series are delivered one at a time, in the order they were written: a
    /// later one waits until the one before is delivered or has failed for good. Series
    /// do not wait for one another (one per task and push configuration, say).
    pub series: String,
    /// Where to post: an `http` or `https` URL, else [`InboxError::InvalidPost`]. Unless
    /// the inbox [allows private posts](crate::InboxBuilder::allow_private_posts), an
    /// attempt to a host that is (or resolves to) a loopback, private or link-local
    /// address fails, saying why.
    pub url: String,
    /// Headers sent with each attempt, such as `("X-A2A-Notification-Token", token)` or
    /// `("Authorization", "Bearer …")`: secrets, never shown or logged.
    pub headers: Vec<(String, String)>,
    /// The body's media type (`application/a2a+json`), sent as `Content-Type`; it takes the
    /// place of a `Content-Type` among the headers.
    pub content_type: String,
    /// The body, posted as it is on every attempt.
    pub body: String,
}

impl fmt::Debug for Post {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Post")
            .field("series", &self.series)
            .field("url", &shown_url(&self.url))
            .field("headers", &names)
            .field("content_type", &self.content_type)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A post ([`Inbox::post`]) and how its delivery went ([`Inbox::posts`]); never its
/// headers.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PostDelivery {
    /// The id it was written under.
    pub id: String,
    /// Where it goes, without the URL's query, fragment or user info.
    pub url: String,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    /// The HTTP status of the last attempt that got an answer.
    pub last_status: Option<u16>,
    /// Why the last attempt failed, when it did (and, once it is `Failed`, why it was
    /// given up). It never names a header's value or the URL's query.
    pub last_error: Option<String>,
    /// When it was written.
    pub created_at: SystemTime,
    /// When an attempt succeeded.
    pub delivered_at: Option<SystemTime>,
    /// When the next attempt is due, while pending (a post waiting for an earlier one of
    /// its series goes only after that one).
    pub next_attempt_at: Option<SystemTime>,
}

/// How many posts are in flight at once in one deliverer; each is of another series.
const BATCH: usize = 16;

/// Headers the client writes itself: a caller's would contradict the request sent.
const REFUSED_HEADERS: &[&str] = &["host", "content-length", "transfer-encoding", "connection"];

/// The URL as it may be shown: scheme, host, port and path.
fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut url) => {
            url.set_query(None);
            url.set_fragment(None);
            // Cannot fail for an http(s) URL, the only kind stored; another keeps nothing.
            if url.set_username("").is_err() || url.set_password(None).is_err() {
                return "(not an http URL)".to_owned();
            }
            url.to_string()
        }
        Err(_) => "(not a URL)".to_owned(),
    }
}

impl Post {
    /// The post checked: its URL and headers usable. The reason names a header, never
    /// its value, and never the URL's query.
    fn check(&self) -> Result<(), InboxError> {
        let invalid = |reason: String| Err(InboxError::InvalidPost(reason));
        let url = match reqwest::Url::parse(&self.url) {
            Ok(url) => url,
            Err(e) => return invalid(format!("its URL does not parse: {e}")),
        };
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return invalid(format!(
                "its URL must be http or https with a host, not {}",
                shown_url(&self.url)
            ));
        }
        for (name, value) in &self.headers {
            let Ok(parsed) = http::HeaderName::from_bytes(name.as_bytes()) else {
                return invalid(format!("{name:?} is not a header name"));
            };
            if REFUSED_HEADERS.contains(&parsed.as_str()) {
                return invalid(format!("header {name} is the client's to write"));
            }
            if http::HeaderValue::from_str(value).is_err() {
                return invalid(format!("the value of header {name} is not a header value"));
            }
        }
        if http::HeaderValue::from_str(&self.content_type).is_err() {
            return invalid(format!(
                "its content type {:?} is not a header value",
                self.content_type
            ));
        }
        Ok(())
    }
}

/// What one claim of a post came to.
enum Sent {
    /// The receiver answered with this status.
    Status(u16),
    /// No answer: why.
    Failed(String),
    /// Its time ran out before this attempt: nothing was sent.
    Expired,
}

impl Inbox {
    /// Writes `post` under `id` (one id space for every series), due at once, and wakes
    /// this process's deliverers ([`Worker`](crate::Worker)); a post with an id already
    /// written stays as it is, so writing again after an error is safe. It is delivered after every post of its
    /// series written before, with [`InboxBuilder::post_retries`](crate::InboxBuilder::post_retries)'s
    /// attempts until [`post_expiry`](crate::InboxBuilder::post_expiry), at least once: a
    /// receiver may get it twice (after a deliverer died mid-attempt), and deduplicates by
    /// what the body says.
    ///
    /// [`InboxError::InvalidPost`] when its URL is not http(s) or a header cannot be sent.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{DeliveryState, Inbox, Post};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let post = Post {
    ///     series: "task-7".to_owned(),
    ///     url: "https://agent.example.com/push".to_owned(),
    ///     headers: vec![("X-A2A-Notification-Token".to_owned(), "tok-123".to_owned())],
    ///     content_type: "application/a2a+json".to_owned(),
    ///     body: r#"{"statusUpdate":{}}"#.to_owned(),
    /// };
    /// inbox.post("task-7/1", post.clone()).await?;
    /// inbox.post("task-7/1", post).await?; // the same id: still one post
    /// let posts = inbox.posts("task-7").await?;
    /// assert_eq!(posts.len(), 1);
    /// assert_eq!(posts[0].state, DeliveryState::Pending);
    /// assert_eq!(inbox.drop_posts("task-7").await?, 1);
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn post(&self, id: &str, post: Post) -> Result<(), InboxError> {
        post.check()?;
        let headers = crate::store::json(id, &post.headers)?;
        let now = self.now();
        let new = NewPost {
            id,
            series: &post.series,
            url: &post.url,
            headers: &headers,
            content_type: &post.content_type,
            body: &post.body,
            at: now,
            expires_at: now.saturating_add(ms(self.inner.posts.expiry)),
        };
        if posts::insert(&self.inner.store.pool, &new).await? {
            self.inner.posted.notify_one();
        }
        Ok(())
    }

    /// Every post of `series`, in the order they are delivered (oldest first), with how
    /// its delivery went; never their headers. Empty for a series with no posts.
    pub async fn posts(&self, series: &str) -> Result<Vec<PostDelivery>, InboxError> {
        let rows = posts::of_series(&self.inner.store.pool, series).await?;
        rows.into_iter().map(post_delivery).collect()
    }

    /// Deletes the posts of `series` not yet delivered nor failed (a task whose push
    /// configuration was deleted), and returns how many. An attempt already under way may
    /// still arrive; nothing is tried after it.
    pub async fn drop_posts(&self, series: &str) -> Result<usize, InboxError> {
        let dropped = posts::drop_pending(&self.inner.store.pool, series).await?;
        Ok(usize::try_from(dropped).unwrap_or(usize::MAX))
    }

    /// Delivers the posts that are due, claiming nothing more once `stopping` says so
    /// (attempts under way are finished and recorded); how many were delivered. Each post
    /// is recorded as its attempt ends, so a receiver that hangs holds up its own series
    /// only.
    pub(crate) async fn deliver_posts_until(
        &self,
        stopping: &(dyn Fn() -> bool + Sync),
    ) -> Result<usize, InboxError> {
        if !posts::any_due(&self.inner.store.pool, self.now()).await? {
            return Ok(0);
        }
        // Each attempt is a task of its own: one that holds a connection to record its end
        // goes on while the next claim waits for one, instead of holding it unpolled until
        // the pool gives up on the claim.
        let mut flying = tokio::task::JoinSet::new();
        let mut delivered = 0;
        let mut failure = None;
        loop {
            if failure.is_none() && !stopping() && flying.len() < BATCH {
                // A post just recorded may have made the next of its series due.
                match self.claim_posts(BATCH - flying.len()).await {
                    Ok(claimed) => {
                        for post in claimed {
                            let inbox = self.clone();
                            flying.spawn(async move { inbox.attempt(post).await });
                        }
                    }
                    Err(e) => failure = Some(e),
                }
            }
            match flying.join_next().await {
                None => break,
                Some(Ok(Ok(true))) => delivered += 1,
                Some(Ok(Ok(false))) => {}
                Some(Ok(Err(e))) => {
                    failure.get_or_insert(e);
                }
                // An attempt that panicked is not recorded: its lease lapses and another
                // claim sends it again.
                Some(Err(panicked)) => {
                    tracing::error!(error = %panicked, "a post's attempt panicked");
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(delivered),
        }
    }

    async fn claim_posts(&self, room: usize) -> Result<Vec<ClaimedPost>, InboxError> {
        let now = self.now();
        // Long enough for the attempt and its recording; a deliverer that dies holds the
        // post no longer than that.
        let lease = now
            .saturating_add(ms(self.inner.posts.timeout))
            .saturating_add(5_000);
        let store = &self.inner.store;
        let room = i64::try_from(room).unwrap_or(i64::MAX);
        posts::claim(&store.pool, store.dialect, now, lease, room).await
    }

    /// One claimed post: sent (unless its time ran out) and recorded; `true` when it was
    /// delivered.
    async fn attempt(&self, claimed: ClaimedPost) -> Result<bool, InboxError> {
        let sent = if self.now() >= claimed.expires_at {
            Sent::Expired
        } else {
            self.send(&claimed).await
        };
        let rules = &self.inner.posts;
        let now = self.now();
        let next_at = now.saturating_add(ms(rules.backoff(claimed.attempts)));
        let exhausted = claimed.attempts >= i64::from(rules.max_attempts);
        // A claim past the post's time sends nothing, and is no attempt.
        let attempts = match sent {
            Sent::Expired => claimed.attempts - 1,
            _ => claimed.attempts,
        };
        let (state, status, error) = match sent {
            Sent::Status(status) if (200..300).contains(&status) => {
                (DeliveryState::Delivered, Some(status), None)
            }
            Sent::Status(status) => (
                DeliveryState::Pending,
                Some(status),
                Some(format!("HTTP {status}")),
            ),
            Sent::Failed(why) => (DeliveryState::Pending, None, Some(why)),
            Sent::Expired => (
                DeliveryState::Failed,
                None,
                Some("given up: its time ran out before it was delivered".to_owned()),
            ),
        };
        let (state, error) = match (state, error) {
            (DeliveryState::Pending, Some(why)) if exhausted => (
                DeliveryState::Failed,
                Some(format!(
                    "{why}; given up after {} attempts",
                    claimed.attempts
                )),
            ),
            // No attempt is made past the post's time, so none is waited for.
            (DeliveryState::Pending, Some(why)) if next_at >= claimed.expires_at => (
                DeliveryState::Failed,
                Some(format!(
                    "{why}; given up: its time runs out before another attempt"
                )),
            ),
            other => other,
        };
        if let Some(error) = &error {
            tracing::warn!(
                post = %claimed.id,
                attempt = claimed.attempts,
                error = %error,
                "a post's delivery failed"
            );
        }
        let attempt = PostAttempt {
            id: &claimed.id,
            claimed: claimed.attempts,
            attempts,
            state,
            next_at,
            status,
            error: error.as_deref(),
            at: now,
        };
        let mut conn = self.inner.store.pool.acquire().await?;
        // `false`: another deliverer took it over after this claim's lease lapsed, or it
        // was dropped; either way this attempt's record is not wanted.
        let recorded = posts::record(&mut conn, &attempt).await?;
        Ok(recorded && state == DeliveryState::Delivered)
    }

    /// One attempt: the status the receiver answered, or why none came. Nothing of the
    /// URL but its host's kind of address, and nothing of the headers, is in the reason.
    async fn send(&self, claimed: &ClaimedPost) -> Sent {
        let rules = &self.inner.posts;
        let Ok(url) = reqwest::Url::parse(&claimed.url) else {
            return Sent::Failed("its URL does not parse".to_owned());
        };
        if let Some(why) = rules.refuse_literal(&url) {
            return Sent::Failed(why);
        }
        let Ok(pairs) = serde_json::from_str::<Vec<(String, String)>>(&claimed.headers) else {
            return Sent::Failed("its stored headers are unreadable".to_owned());
        };
        let mut headers = http::HeaderMap::new();
        for (name, value) in &pairs {
            // Checked when written; a row changed since loses the header, not the post.
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(name.as_bytes()),
                http::HeaderValue::from_str(value),
            ) {
                headers.append(name, value);
            }
        }
        if let Ok(content_type) = http::HeaderValue::from_str(&claimed.content_type) {
            headers.insert(http::header::CONTENT_TYPE, content_type);
        }
        let request = rules
            .http
            .post(url)
            .timeout(rules.timeout)
            .headers(headers)
            .body(claimed.body.clone());
        match request.send().await {
            Ok(response) => Sent::Status(response.status().as_u16()),
            // The URL's query may be a credential: the error never names it.
            Err(e) => Sent::Failed(describe(e.without_url())),
        }
    }
}

fn post_delivery(row: PostRow) -> Result<PostDelivery, InboxError> {
    let state = DeliveryState::parse(&row.state).ok_or_else(|| InboxError::Corrupt {
        id: row.id.clone(),
        reason: format!("a post in unknown state {:?}", row.state),
    })?;
    Ok(PostDelivery {
        url: shown_url(&row.url),
        id: row.id,
        state,
        attempts: u32::try_from(row.attempts).unwrap_or(u32::MAX),
        last_status: row.last_status.and_then(|s| u16::try_from(s).ok()),
        last_error: row.last_error,
        created_at: from_ms(row.created_at),
        delivered_at: row.delivered_at.map(from_ms),
        next_attempt_at: (state == DeliveryState::Pending).then(|| from_ms(row.next_at)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(url: &str, headers: &[(&str, &str)]) -> Post {
        Post {
            series: "s".to_owned(),
            url: url.to_owned(),
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            content_type: "application/json".to_owned(),
            body: "{}".to_owned(),
        }
    }

    #[test]
    fn a_shown_url_keeps_no_credential() {
        assert_eq!(
            shown_url("https://user:pw@example.com:8443/push?token=t#f"),
            "https://example.com:8443/push"
        );
        assert_eq!(shown_url("not a url"), "(not a URL)");
    }

    #[test]
    fn a_post_that_cannot_be_sent_is_refused_without_its_secrets() {
        for (bad, says) in [
            (post("ftp://example.com/x?k=secret", &[]), "http or https"),
            (post("mailto:a@example.com", &[]), "http or https"),
            (post("not a url secret", &[]), "does not parse"),
            (
                post("https://example.com/", &[("bad name", "secret")]),
                "not a header name",
            ),
            (
                post("https://example.com/", &[("X-Token", "secret\n")]),
                "header X-Token",
            ),
            (
                post("https://example.com/", &[("Host", "secret")]),
                "client's to write",
            ),
        ] {
            let why = bad.check().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(why.contains(says), "{why}");
            assert!(!why.contains("secret"), "{why}");
        }
        assert!(post("https://example.com/", &[("X-Token", "t")])
            .check()
            .is_ok());
    }
}
