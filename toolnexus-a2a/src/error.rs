//! Everything this crate can refuse or fail with.

use toolnexus_inbox::InboxError;

/// Why a message could not be taken, or a task could not be served.
///
/// The refusals (`NotAnAnswer`, `UnknownRequest`, `InvalidAnswer`, …) change nothing: the
/// task keeps waiting as it was. None of them carries a database URL or a credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// The continuation does not read as an answer to what the task waits on: a data part
    /// that is no `Answer`, text that is neither an approval nor a decline, or nothing at
    /// all.
    #[error("the message is not an answer to what the task waits on: {0}")]
    NotAnAnswer(String),
    /// The continuation answers a request id the task does not wait on.
    #[error("no request `{id}` waits on this task (waiting: {})", .waiting.join(", "))]
    UnknownRequest {
        /// The id the message named.
        id: String,
        /// The ids that do wait, in call order.
        waiting: Vec<String>,
    },
    /// The answer does not fit its request: a form's data that misses or misfills a field,
    /// or edited arguments that do not fit the tool.
    #[error("the answer to request `{id}` does not fit: {source}")]
    InvalidAnswer {
        /// The request answered.
        id: String,
        /// The form's check: the field at fault, when one is, and every problem.
        source: toolnexus::form::FitError,
    },
    /// The inbox refused or failed.
    #[error(transparent)]
    Inbox(#[from] InboxError),
    /// A URL is not an absolute http(s) URL: the server's public URL
    /// ([`A2aServerBuilder::url`](crate::A2aServerBuilder::url)), a remote agent's, or
    /// one its card gives.
    #[error("`{url}` is not a usable A2A URL: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The card's security ([`CardSecurity`](crate::CardSecurity)) cannot be declared as
    /// given: why.
    #[error("the card's security cannot be declared: {0}")]
    CardSecurity(String),
    // Calling a remote agent (RemoteAgent).
    /// A header given to the builder has an invalid name or value (the value is not shown).
    #[error("the header `{name}` is not a valid HTTP header")]
    InvalidHeader {
        /// The header's name, as given.
        name: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The agent could not be reached, or its reply not read.
    #[error("cannot reach the A2A agent at {url}: {}", causes(.source))]
    Http {
        /// Where the request went.
        url: String,
        /// The transport's error.
        #[source]
        source: reqwest::Error,
    },
    /// The agent did not answer within the configured timeout.
    #[error("the A2A agent at {url} did not answer within {timeout:?}")]
    Timeout {
        /// Where the request went.
        url: String,
        /// The timeout that passed.
        timeout: std::time::Duration,
    },
    /// The agent answered with an HTTP status that is not a success, and no JSON-RPC error.
    #[error("the A2A agent at {url} answered HTTP {status}")]
    Status {
        /// Where the request went.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// A reply was larger than the client reads.
    #[error("the reply of the A2A agent at {url} is larger than {limit} bytes")]
    TooLarge {
        /// Where the request went.
        url: String,
        /// The most the client reads.
        limit: usize,
    },
    /// A card signing or checking key is not one ([`CardSigner`](crate::CardSigner),
    /// [`CardKey`](crate::CardKey)), or a card cannot be signed.
    #[error("card key: {0}")]
    CardKey(String),
    /// The agent card is not signed by the key the client was given
    /// ([`RemoteAgentBuilder::card_key`](crate::RemoteAgentBuilder::card_key)).
    #[error("the agent card at {url} is not signed by the expected key: {reason}")]
    CardSignature {
        /// Where the card was fetched.
        url: String,
        /// Why no signature was taken.
        reason: String,
    },
    /// The agent card is not an A2A 1.0 agent card.
    #[error("the agent card at {url} is not a valid A2A agent card: {source}")]
    Card {
        /// Where the card was fetched.
        url: String,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The agent card offers no JSON-RPC interface of protocol version 1.0.
    #[error(
        "the agent card at {url} offers no JSON-RPC or HTTP+JSON interface of A2A protocol 1.0 (it offers: {offered})"
    )]
    NoInterface {
        /// Where the card was fetched.
        url: String,
        /// The interfaces it offers, as `binding version` pairs.
        offered: String,
    },
    /// The agent's reply is not what its binding says (a JSON-RPC 2.0 response, or the
    /// HTTP+JSON body of the method), or its result is not what the method returns.
    #[error("the A2A agent at {url} did not answer {method} as its binding says: {reason}")]
    NotJsonRpc {
        /// Where the request went.
        url: String,
        /// The method called.
        method: &'static str,
        /// What is wrong with the reply.
        reason: String,
    },
    /// The agent answered with an A2A error (a JSON-RPC error, or over HTTP+JSON the error
    /// whose reason names it).
    #[error("the A2A agent at {url} refused {method}: {message} (A2A error {code})")]
    Rpc {
        /// Where the request went.
        url: String,
        /// The method called.
        method: &'static str,
        /// The JSON-RPC error code (A2A's are -32001 to -32009).
        code: i32,
        /// The agent's message.
        message: String,
    },
}

/// An error and its causes, outermost first: reqwest's own message ("error sending
/// request") says nothing of why (a refused connection, a TLS failure).
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        next = cause.source();
    }
    text
}
