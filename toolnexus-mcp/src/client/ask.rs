//! The client side's handler: what this client declares, and how it answers a server's
//! `elicitation/create` sent in the middle of a call (protocols before 2026-07-28).

use std::sync::Arc;

use rmcp::model::{ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use toolnexus::{Answer, BoxFuture, Request};

use crate::elicit::{to_request, to_result};

/// The host's answerer for mid-call elicitations.
pub(super) type WaitFor = Arc<dyn Fn(Request) -> BoxFuture<'static, Answer> + Send + Sync>;

#[derive(Clone)]
pub(crate) struct Asker {
    wait_for: Option<WaitFor>,
    config: ClientConfig,
}

impl Asker {
    pub(super) fn new(wait_for: Option<WaitFor>, config: ClientConfig) -> Self {
        Self { wait_for, config }
    }
}

impl ClientHandler for Asker {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(wait_for) = &self.wait_for else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // A URL elicitation names itself; a form gets a fresh id to correlate the answer.
        let id = match &params {
            ElicitRequestParams::UrlElicitationParams { elicitation_id, .. }
                if !elicitation_id.is_empty() =>
            {
                elicitation_id.clone()
            }
            _ => uuid::Uuid::new_v4().to_string(),
        };
        let request = to_request(id, &params);
        let answer = wait_for(request.clone()).await;
        if answer.id != request.id {
            // An answer to some other request is not trusted with this one.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        Ok(to_result(&answer))
    }
}
