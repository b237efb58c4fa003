//! A remote A2A agent as a toolnexus [`Tool`](toolnexus::Tool).

mod agent;
mod builder;
mod card;
mod continuation;
mod follow;
mod reply;
mod round;
mod rpc;
mod sse;
mod stream;

pub use agent::RemoteAgent;
pub use builder::RemoteAgentBuilder;
