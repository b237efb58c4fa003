//! [`Conversation`]: one thread of a client's [`ConversationStore`](crate::ConversationStore),
//! by id, continued run after run.

use super::error::ClientError;
use super::llm_client::LlmClient;
use super::message::Message;
use super::run::{InThread, Run};
use super::store::store_error;
use crate::{Answer, Request, Toolkit};

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

    /// Runs `prompt` in this thread: loads the thread, continues it (as
    /// [`Run::history`] does) and saves the whole transcript back, halted runs included
    /// (resume those with [`resume`](Self::resume)). A failed run saves nothing.
    ///
    /// When the thread's last run halted, its waiting calls are declined with the reason
    /// `superseded` ([`Refusal::Superseded`](crate::Refusal::Superseded)) before the new
    /// message: the model is told what was set aside, and the transcript stays balanced. The
    /// returned [`Run`] takes [`options`](Run::options), [`cancel`](Run::cancel) and
    /// [`stream`](Run::stream).
    pub fn send<'a>(&'a self, prompt: impl Into<String>, tk: &'a Toolkit) -> Run<'a, InThread> {
        Run::in_thread(self.client.settings(), self.id.clone(), prompt.into(), tk)
    }

    /// Resumes the thread's halted run with the host's answer
    /// ([`LlmClient::run_with_answer`] on the stored transcript) and saves the result.
    pub fn resume<'a>(
        &'a self,
        request: &'a Request,
        answer: Answer,
        tk: &'a Toolkit,
    ) -> Run<'a, InThread> {
        let settings = self.client.settings();
        Run::resume_thread(settings, self.id.clone(), Some(request), vec![answer], tk)
    }

    /// Resumes the thread's halted run with answers to any of the requests it waits on
    /// ([`LlmClient::run_with_answers`] on the stored transcript) and saves the result.
    pub fn resume_with_answers<'a>(
        &'a self,
        answers: Vec<Answer>,
        tk: &'a Toolkit,
    ) -> Run<'a, InThread> {
        Run::resume_thread(self.client.settings(), self.id.clone(), None, answers, tk)
    }

    /// The thread's messages so far.
    pub async fn messages(&self) -> Result<Vec<Message>, ClientError> {
        let store = &*self.client.settings().store;
        store.get(&self.id).await.map_err(store_error)
    }

    /// Empties the thread.
    pub async fn reset(&self) -> Result<(), ClientError> {
        self.save(&[]).await
    }

    async fn save(&self, messages: &[Message]) -> Result<(), ClientError> {
        let store = &*self.client.settings().store;
        store.save(&self.id, messages).await.map_err(store_error)
    }
}
