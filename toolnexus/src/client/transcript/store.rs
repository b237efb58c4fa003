//! [`ConversationStore`]: where a client's [`Conversation`](crate::Conversation)s keep
//! their threads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::client::error::{ClientError, ErrorDetail};
use crate::client::transcript::message::Message;
use crate::BoxFuture;

/// What a store fails with: any error, boxed. It reaches the caller as
/// [`ClientError::Store`](crate::ClientError::Store) with its message.
pub type StoreError = Box<dyn std::error::Error + Send + Sync>;

/// Keeps conversation threads (transcripts) by id, for the client's
/// [`Conversation`](crate::Conversation)s ([`LlmClient::conversation`](crate::LlmClient::conversation)).
///
/// Object-safe and async: implement it over a database, a cache, files… The client holds
/// one (set with [`LlmClientBuilder::store`](crate::LlmClientBuilder::store); an
/// [`InMemoryStore`] by default). The store does not lock threads: two runs on one thread at
/// the same time both start from the same history and the later save wins.
///
/// ```
/// use toolnexus::{BoxFuture, ConversationStore, Message, StoreError};
///
/// /// Forgets everything: every thread starts empty.
/// struct Amnesia;
///
/// impl ConversationStore for Amnesia {
///     fn get<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<Vec<Message>, StoreError>> {
///         Box::pin(async { Ok(Vec::new()) })
///     }
///     fn save<'a>(
///         &'a self,
///         _id: &'a str,
///         _messages: &'a [Message],
///     ) -> BoxFuture<'a, Result<(), StoreError>> {
///         Box::pin(async { Ok(()) })
///     }
/// }
/// ```
pub trait ConversationStore: Send + Sync + 'static {
    /// The thread's messages, oldest first; empty for an id never saved.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<Message>, StoreError>>;

    /// Replaces the thread's messages (the whole transcript, not a delta).
    fn save<'a>(
        &'a self,
        id: &'a str,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

impl<T: ConversationStore + ?Sized> ConversationStore for Arc<T> {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<Message>, StoreError>> {
        (**self).get(id)
    }

    fn save<'a>(
        &'a self,
        id: &'a str,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).save(id, messages)
    }
}

/// A [`ConversationStore`] in process memory, lost when the process ends. Clones share
/// their threads, so one store can serve several clients.
///
/// ```
/// use toolnexus::{InMemoryStore, LlmClient};
///
/// let store = InMemoryStore::new();
/// let build = || {
///     LlmClient::builder()
///         .model("gpt-4o-mini")
///         .api_key("test-key")
///         .store(store.clone())
///         .build()
/// };
/// let (first, second) = (build().unwrap(), build().unwrap());
/// // `first.conversation("thread-1")` and `second.conversation("thread-1")` continue one
/// // thread.
/// # drop((first, second));
/// ```
#[derive(Clone, Default)]
pub struct InMemoryStore {
    threads: Arc<Mutex<HashMap<String, Vec<Message>>>>,
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn threads(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Message>>> {
        // A whole transcript is swapped in at once, so a poisoned lock holds no half-update.
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for InMemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryStore")
            .field("threads", &self.threads().len())
            .finish()
    }
}

impl ConversationStore for InMemoryStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<Message>, StoreError>> {
        let thread = self.threads().get(id).cloned().unwrap_or_default();
        Box::pin(async move { Ok(thread) })
    }

    fn save<'a>(
        &'a self,
        id: &'a str,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let mut threads = self.threads();
        if messages.is_empty() {
            threads.remove(id);
        } else {
            threads.insert(id.to_owned(), messages.to_vec());
        }
        Box::pin(async { Ok(()) })
    }
}

/// A store's failure as the run reports it.
pub(crate) fn store_error(e: StoreError) -> ClientError {
    ClientError::Store(ErrorDetail::caused_by_boxed(e.to_string(), e))
}
