//! One stretch of the loop, from a prompt or a resume to the run's end or its next halt,
//! run the same way in the workflow and in a step activity: the core's own loop, with a
//! journal that answers every step the stretch has made. Where the two differ is what
//! their journal does with a step it does not hold.

use toolnexus::{ClientError, Journal, RunOptions, RunResult};

use crate::agent::Inner;
use crate::wire::Start;

/// Runs the core's loop over `start` under run id `run`, with `journal`.
pub(crate) async fn drive(
    agent: &Inner,
    run: &str,
    start: Start,
    journal: &dyn Journal,
    options: RunOptions,
) -> Result<RunResult, ClientError> {
    let tk = &agent.toolkit;
    match start {
        Start::Prompt { prompt } => {
            agent
                .client
                .run(prompt, tk)
                .id(run)
                .options(options)
                .journal(journal)
                .await
        }
        Start::Answers { messages, answers } => {
            agent
                .client
                .run_with_answers(messages, answers, tk)
                .options(options)
                .journal(journal)
                .await
        }
    }
}
