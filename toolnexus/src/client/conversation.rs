//! Memory across runs: continuing a given history, and threads kept in the client's
//! [`ConversationStore`](crate::ConversationStore) by id.

use super::event::Silent;
use super::run::{RunState, Start};
use super::store::StoreError;
use super::{ClientError, LlmClient, Message, RunResult};
use crate::{Answer, Request, Toolkit};

impl LlmClient {
    /// Like [`run`](Self::run), continuing `history` (e.g. an earlier run's
    /// [`RunResult::messages`]): `prompt` is appended as a new user message and the model
    /// sees the whole transcript. The system prompt is put first only when `history` holds
    /// no system message (so a history from an earlier run keeps its own).
    ///
    /// A history that ends with tool calls still waiting for results (a halted run) cannot
    /// take a new message: resume it with [`run_with_answer`](Self::run_with_answer); that is
    /// `Err(ClientError::InvalidTranscript)`, and nothing is sent.
    pub async fn run_with_history(
        &self,
        prompt: impl Into<String>,
        history: Vec<Message>,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        let transcript = self.new_transcript(prompt.into(), history)?;
        self.go(RunState::new(transcript), Start::Fresh, tk, &Silent)
            .await
    }

    /// Runs `prompt` in the thread `id` of the client's [`ConversationStore`](crate::ConversationStore): loads the
    /// thread, continues it ([`run_with_history`](Self::run_with_history)) and saves the
    /// whole transcript back, halted runs included (resume those with
    /// [`Conversation::resume`]). A failed run saves nothing.
    ///
    /// ```
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let model = MockLlm::start([Reply::text("Hello Ann."), Reply::text("Ann.")]).await?;
    /// # let client = toolnexus::LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// # let tk = toolnexus::Toolkit::builder().build()?;
    /// client.ask("My name is Ann.", "user-42", &tk).await?;
    /// let reply = client.ask("What is my name?", "user-42", &tk).await?;
    /// println!("{}", reply.text); // the model saw the first exchange
    /// # let second = &model.requests()[1];
    /// # assert_eq!(second.messages()[0]["content"], "My name is Ann.");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn ask(
        &self,
        prompt: impl Into<String>,
        id: &str,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        let store = &self.inner.store;
        let history = store.get(id).await.map_err(store_error)?;
        let result = self.run_with_history(prompt, history, tk).await?;
        store
            .save(id, &result.messages)
            .await
            .map_err(store_error)?;
        Ok(result)
    }

    /// A handle on the thread `id` of this client's store.
    pub fn conversation(&self, id: impl Into<String>) -> Conversation {
        Conversation::new(self.clone(), id)
    }

    /// The transcript a fresh run starts from: `history`, the system prompt when `history`
    /// has none, then `prompt`.
    pub(super) fn new_transcript(
        &self,
        prompt: String,
        mut history: Vec<Message>,
    ) -> Result<Vec<Message>, ClientError> {
        let halted = match history.last() {
            Some(Message::Assistant { tool_calls, .. }) => !tool_calls.is_empty(),
            Some(Message::ToolResults { results }) => results.iter().any(|r| r.pending.is_some()),
            _ => false,
        };
        if halted {
            return Err(ClientError::InvalidTranscript(
                "it ends with tool calls still waiting for results: resume it with `run_with_answer`"
                    .into(),
            ));
        }
        if let Some(system) = &self.inner.system_prompt {
            if !history.iter().any(|m| matches!(m, Message::System { .. })) {
                history.insert(0, Message::system(system.clone()));
            }
        }
        history.push(Message::user(prompt));
        Ok(history)
    }
}

fn store_error(e: StoreError) -> ClientError {
    ClientError::Store(e.to_string())
}

/// One thread of a client's [`ConversationStore`](crate::ConversationStore), by id: each [`send`](Self::send) sees the
/// messages before it.
///
/// ```
/// # #[cfg(not(feature = "testing"))] fn main() {}
/// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use toolnexus::testing::{MockLlm, Reply};
/// # let model = MockLlm::start([Reply::text("Noted."), Reply::text("On its way.")]).await?;
/// # let client = toolnexus::LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
/// # let tk = toolnexus::Toolkit::builder().build()?;
/// let chat = client.conversation("support-7");
/// chat.send("My order is #1234.", &tk).await?;
/// let reply = chat.send("Where is it?", &tk).await?;
/// assert_eq!(chat.messages().await?.len(), 4);
/// chat.reset().await?; // forget the thread
/// assert!(chat.messages().await?.is_empty());
/// # assert_eq!(reply.text, "On its way.");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Conversation {
    client: LlmClient,
    id: String,
}

impl Conversation {
    /// A handle on thread `id` of `client`'s store (see also [`LlmClient::conversation`]).
    pub fn new(client: LlmClient, id: impl Into<String>) -> Self {
        Conversation {
            client,
            id: id.into(),
        }
    }

    /// The thread's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends `prompt` in this thread ([`LlmClient::ask`]).
    pub async fn send(
        &self,
        prompt: impl Into<String>,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        self.client.ask(prompt, &self.id, tk).await
    }

    /// Resumes the thread's halted run with the host's answer
    /// ([`LlmClient::run_with_answer`] on the stored transcript) and saves the result.
    pub async fn resume(
        &self,
        request: &Request,
        answer: Answer,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        let history = self.messages().await?;
        let result = self
            .client
            .run_with_answer(history, request, answer, tk)
            .await?;
        self.save(&result.messages).await?;
        Ok(result)
    }

    /// The thread's messages so far.
    pub async fn messages(&self) -> Result<Vec<Message>, ClientError> {
        let store = &self.client.inner.store;
        store.get(&self.id).await.map_err(store_error)
    }

    /// Empties the thread.
    pub async fn reset(&self) -> Result<(), ClientError> {
        self.save(&[]).await
    }

    async fn save(&self, messages: &[Message]) -> Result<(), ClientError> {
        let store = &self.client.inner.store;
        store.save(&self.id, messages).await.map_err(store_error)
    }
}
