//! Shared by the fuzz targets: input shapes, checks, and a generated-style tool.

mod checks;
mod order;
mod shapes;

pub use checks::{block_on, check_reply, round_trip};
pub use order::{take_each, Order, Shipping};
pub use shapes::{anthropic_reply, openai_reply, shaped_json};
