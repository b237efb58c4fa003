//! The run driver: one invocation of the loop, owned by a private [`Driver`] that holds the
//! client's settings, the toolkit, the event sink and the run's state. Control goes strictly
//! downward: [`drive`] → [`turn`] → [`call`] → [`suspension`].

mod bounds;
mod call;
mod cx;
mod drive;
mod limits;
mod suspension;
mod turn;

pub(crate) use drive::{run, Scope, Start};
