//! What a door needs beside the inbox's decisions. A door (A2A, AG-UI, MCP, a host's own)
//! translates its protocol into parks and answers; what it keeps of its own lives here, so
//! no door grows a state machine: who it takes a request from ([`admission`]), its record
//! of a task or thread ([`record`]) and notes ([`note`]) and the listing of them
//! ([`listing`]), whose the task is ([`starter`]), what it has under way in this process
//! ([`in_flight`]), the run a task has become ([`chain`]), and the one wait every door does
//! once a run is answered ([`awaited`]).

pub(crate) mod admission;
pub(crate) mod awaited;
pub(crate) mod chain;
pub(crate) mod in_flight;
pub(crate) mod listing;
pub(crate) mod note;
pub(crate) mod record;
pub(crate) mod starter;

#[cfg(test)]
mod tests;
