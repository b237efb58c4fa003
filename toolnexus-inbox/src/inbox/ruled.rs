//! Who may answer a request before it is parked: what a door asks to tell a question only
//! the inbox's people may settle from one its caller may settle in the call.

use toolnexus::Request;

use crate::inbox::Inbox;
use crate::policy::people::Responder;

impl Inbox {
    /// Who may answer `request` if this handle parked it now: its own `data.responders`,
    /// else this handle's rule for its kind or its agent ([`responders`](Self::responders)
    /// for a request not parked yet); `None` when nothing limits it.
    ///
    /// A door that could let its caller answer a question in the call asks this first: a
    /// question some rule limits is settled through the inbox, which judges who answers.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus::Request;
    /// use toolnexus_inbox::{Inbox, Responder};
    ///
    /// let inbox = Inbox::builder("sqlite::memory:")
    ///     .responders("approval", ["group:finance"])
    ///     .open()
    ///     .await?;
    /// let pay = Request::new("approval", "Pay?");
    /// assert_eq!(inbox.responders_of(&pay), Some(vec![Responder::group("finance")]));
    /// assert_eq!(inbox.responders_of(&Request::new("input", "Which city?")), None);
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub fn responders_of(&self, request: &Request) -> Option<Vec<Responder>> {
        self.inner.rules.responders(request, &self.inner.agent, &[])
    }
}
