//! The run driver: one invocation of the loop, owned by a private [`Driver`] that holds the
//! client's settings, the toolkit, the event sink and the run's state. Control goes strictly
//! downward: [`run`](self::run) → [`turn`] → [`call`] → [`suspension`].

mod bounds;
mod call;
mod cx;
mod run;
mod suspension;
mod turn;

pub(crate) use run::{run, Scope, Start};
