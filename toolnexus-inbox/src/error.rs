//! Everything an inbox call can refuse or fail with.

use toolnexus::form::FitError as FieldError;
use toolnexus::ClientError;

use crate::records::state::ParkedState;

// Kept beside the error it bounds, which names it, so the error needs nothing of the walk.
/// The longest chain of runs [`Inbox::follow`](crate::Inbox::follow) walks before it takes
/// the chain as corrupt. Each link is a person's answer that led to another question, so a
/// real chain is short.
pub const MAX_CHAIN: usize = 1_000;

/// Why an inbox call did not do what it was asked.
///
/// Refusals (`AlreadyParked`, `NotWaiting`, `Expired`, `InvalidAnswer`, …) change nothing
/// in the database. `Database` keeps the driver's error as its source; it never carries the
/// connection URL or its password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InboxError {
    /// `park` was given a run that did not halt on a request (`RunStatus::Pending`).
    #[error("the run did not halt on a request, so there is nothing to park")]
    NotPending,
    /// A run is already parked on this request id.
    #[error("a run is already parked on request `{0}`")]
    AlreadyParked(String),
    /// No run is parked on this request id (for this handle's agent, when resuming).
    #[error("no run is parked on request `{0}`")]
    UnknownRequest(String),
    /// The request was already answered (or its run resumed, finished or failed): the
    /// first answer won.
    #[error("request `{id}` is not waiting for an answer: it is {state}")]
    NotWaiting {
        /// The request.
        id: String,
        /// Where its run stands.
        state: ParkedState,
    },
    /// The request's `expiresAt` has passed; `expire_due` declines it with `"expired"`.
    #[error("request `{0}` expired before it was answered")]
    Expired(String),
    /// The answer's data does not fit the form the request carries (`data.schema`), or a
    /// gate's edited arguments ([`Answer::with_args`](toolnexus::Answer::with_args)) do not
    /// fit the tool's input schema (`data.argsSchema`); edits on any other request are
    /// refused with the field `args`.
    #[error("{}", invalid_answer(field.as_deref(), reason))]
    InvalidAnswer {
        /// The form field at fault; `None` when the answer as a whole does not fit (no
        /// data, or data that is not an object).
        field: Option<String>,
        /// What is wrong, in words a person filling in the form can act on. When several
        /// fields are at fault, it goes on to name the others: `must be a whole number;
        /// field `zip` must be at least 5 characters`.
        reason: String,
    },
    /// The request names who may answer it (its `data.responders`, or the inbox's rule
    /// for its kind or agent) and `who` is not one of them; `None` when the answer named
    /// nobody ([`Inbox::answer`](crate::Inbox::answer)), who is then not known to be allowed.
    #[error("{} may not answer request `{request}`", who.as_deref().unwrap_or("an anonymous answer"))]
    NotAllowed {
        /// The request.
        request: String,
        /// Who tried to answer it.
        who: Option<String>,
    },
    /// A request of the run has no answer yet (it names the first such), so the run
    /// cannot be resumed.
    #[error("request `{0}` has not been answered yet")]
    NotAnswered(String),
    /// Another worker holds the run's lease, or took it over after this worker's lease
    /// lapsed; this worker's outcome was not recorded.
    #[error("request `{0}` is claimed by another worker")]
    Claimed(String),
    /// The run was already resumed to its end, or gave up after too many attempts.
    #[error("request `{id}` was already resumed: it is {state}")]
    Finished {
        /// The request.
        id: String,
        /// `Done` or `Failed`.
        state: ParkedState,
    },
    /// A stored row cannot be read back (its transcript, request or answer is not the JSON
    /// it should be). The row is marked `Failed` with this reason; other rows are unaffected.
    #[error("the parked run `{id}` is unreadable: {reason}")]
    Corrupt {
        /// The row's request id.
        id: String,
        /// What could not be read.
        reason: String,
    },
    /// One answer of a batch ([`Inbox::answer_all`](crate::Inbox::answer_all)) was
    /// refused, so none of the batch was recorded: `source` says why, `request` names it.
    #[error("{source} (request `{request}`: no answer of the batch was recorded)")]
    Batch {
        /// The request whose answer was refused.
        request: String,
        /// Why it was refused.
        source: Box<InboxError>,
    },
    /// Two answers of one batch name the same request.
    #[error("request `{0}` is answered twice in one batch")]
    AnsweredTwice(String),
    /// An answer of a batch names a request of another run than the batch's.
    #[error("request `{request}` is not one of run `{run}`'s requests")]
    OtherRun {
        /// The request the answer names.
        request: String,
        /// The run the batch answers.
        run: String,
    },
    /// A door's record ([`Inbox::record`](crate::Inbox::record)) does not read back as the
    /// door's type.
    #[error("the {door} record `{id}` is unreadable: {reason}")]
    CorruptRecord {
        /// The door that kept it.
        door: &'static str,
        /// The door's id for it.
        id: String,
        /// What could not be read.
        reason: String,
    },
    /// A chain of runs ([`Inbox::follow`](crate::Inbox::follow)) is longer than
    /// [`MAX_CHAIN`](crate::MAX_CHAIN): taken as corrupt rather than followed for ever.
    #[error("run `{0}` chains more than {max} runs", max = MAX_CHAIN)]
    ChainTooLong(String),
    /// A list of bearer tokens ([`BearerTokens::parse`](crate::BearerTokens::parse)) is not
    /// one; the reason names the line, never its token.
    #[error("the bearer tokens cannot be read: {0}")]
    InvalidTokens(String),
    /// An OpenID provider cannot be used to check tokens: a setting of
    /// [`OidcTokens`](crate::OidcTokens) is wrong, or the provider's discovery document or
    /// keys at `url` cannot be read or trusted. The source, when there is one, is the
    /// HTTP or JSON failure.
    #[cfg(feature = "oidc")]
    #[error("the OpenID provider cannot be used ({url}): {reason}")]
    InvalidProvider {
        /// The issuer, or the document of its that failed.
        url: String,
        /// What is wrong.
        reason: String,
        /// The failure underneath, if any.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The request's rule is written wrong (`data.responders`, `quorum`, `edits` or
    /// `remember`: [`Request::rule`](toolnexus::Request::rule)), so it is not parked:
    /// nothing could tell who may answer it.
    #[error("request `{id}` cannot be parked: {reason}")]
    InvalidRule {
        /// The request.
        id: String,
        /// What is wrong with its rule.
        reason: String,
    },
    /// The request carries an `expiresAt` that is not an RFC 3339 timestamp.
    #[error("request `{id}` has an expiresAt that is not an RFC 3339 timestamp: {value:?}")]
    InvalidExpiry {
        /// The request.
        id: String,
        /// The value it carries.
        value: String,
    },
    /// The database was made by a newer version of this crate; open it with that version.
    #[error(
        "the inbox database has schema version {found}, newer than the {supported} this \
         version of toolnexus-inbox knows: upgrade toolnexus-inbox to open it"
    )]
    SchemaTooNew {
        /// The version the database records.
        found: i64,
        /// The newest version this crate knows.
        supported: i64,
    },
    /// A webhook cannot be used as configured (its URL or its secret); the reason never
    /// repeats the secret or the URL's path.
    #[error("webhook `{name}` cannot be used: {reason}")]
    InvalidWebhook {
        /// The webhook's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A [`Post`](crate::Post) cannot be sent as written: its URL is not http(s), or a
    /// header's name or value cannot go in a request. The reason names the header, never
    /// its value, and never the URL's query.
    #[error("the post cannot be sent: {0}")]
    InvalidPost(String),

    /// [`InboxBuilder::page_url`](crate::InboxBuilder::page_url) is not an absolute URL.
    #[error("the inbox page URL {0:?} is not an absolute http(s) URL")]
    InvalidPageUrl(String),

    /// The URL names no engine this crate speaks (`sqlite:` or `postgres:`).
    #[error("unsupported inbox URL {0:?}: use sqlite://PATH, sqlite::memory: or postgres://…")]
    UnsupportedUrl(String),
    /// The URL names an engine this build left out: enable the crate's feature of that
    /// name (`sqlite` or `postgres`, both on by default).
    #[error("the inbox URL names {engine}, which this build of toolnexus-inbox leaves out: enable its `{engine}` feature")]
    EngineNotBuilt {
        /// The engine, as its feature is named.
        engine: &'static str,
    },
    /// The database could not be reached or refused a statement. Nothing was half-written:
    /// every change is one transaction.
    #[error("the inbox database failed: {0}")]
    Database(#[source] sqlx::Error),
    /// The resumed run failed (the provider was down, the transcript did not fit the
    /// request, …). The error is recorded on the row, and the run is resumed again after the
    /// lease, up to the attempt limit.
    #[error("the resumed run failed: {0}")]
    Resume(#[source] ClientError),
    /// `who` asked for the run request `request` belongs to, and its rule keeps the
    /// requester from approving it (`not_requester`), themselves or through someone holding
    /// their rights. Nothing changed.
    #[error("{who} asked for this run, and request `{request}` is approved by someone else")]
    Requester {
        /// The request.
        request: String,
        /// Who tried to answer (or on whose behalf).
        who: String,
    },
    /// The person already counts toward request `request`'s quorum — they approved it
    /// themselves, or someone approved it for them, or they approved it for someone else —
    /// so this answer would count one person twice. Nothing changed.
    #[error("{who} already counts toward request `{request}`: one person approves once")]
    AlreadyCounted {
        /// The request.
        request: String,
        /// Who would have counted twice (the person, or the one they answer for).
        who: String,
    },
    /// A delegation that cannot be given: to oneself, to nobody, or ending before it starts.
    #[error("this delegation cannot be given: {0}")]
    InvalidDelegation(String),
    /// No delegation in force has this id among those the person gave.
    #[error("no delegation `{0}` of yours is in force")]
    UnknownDelegation(String),
    /// A receipt key could not be loaded, or a receipt does not check out.
    #[error(transparent)]
    Receipt(#[from] crate::receipt::ReceiptError),
}

impl InboxError {
    /// The refusal itself: for a [`Batch`](Self::Batch), the error of the answer it names;
    /// any other error as it is. What a door maps onto its protocol's errors.
    pub fn cause(&self) -> &InboxError {
        match self {
            InboxError::Batch { source, .. } => source.cause(),
            other => other,
        }
    }
}

fn invalid_answer(field: Option<&str>, reason: &str) -> String {
    format!(
        "the answer does not fit the form: {}",
        invalid_answer_part(field, reason)
    )
}

impl From<sqlx::Error> for InboxError {
    fn from(e: sqlx::Error) -> Self {
        InboxError::Database(e)
    }
}

/// The first problem's field, and a reason that goes on to the others, so every problem
/// is reported at once through the two fields the variant has.
impl From<FieldError> for InboxError {
    fn from(e: FieldError) -> Self {
        let mut reason = e.reason;
        for other in e.problems.iter().skip(1) {
            reason.push_str("; ");
            reason.push_str(&invalid_answer_part(other.field.as_deref(), &other.reason));
        }
        InboxError::InvalidAnswer {
            field: e.field,
            reason,
        }
    }
}

fn invalid_answer_part(field: Option<&str>, reason: &str) -> String {
    match field {
        Some(field) => format!("field `{field}` {reason}"),
        None => reason.to_owned(),
    }
}
