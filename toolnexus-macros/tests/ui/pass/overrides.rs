//! `name`, `description`, `struct_name` and `crate` options.
#![deny(warnings)]
use std::ops::Add;
use toolnexus::{tool, Tool};

mod reexport {
    pub use toolnexus as runtime;
}

/// Adds two numbers
#[tool(struct_name = "AddTool")]
async fn add(a: i64, b: i64) -> String {
    a.add(b).to_string()
}

#[tool(name = "get-weather_v2", description = "Current weather for a city")]
async fn weather(city: String) -> String {
    city
}

/// Reached through a re-export
#[tool(crate = "self::reexport::runtime", name = "via_reexport")]
async fn reexported() -> &'static str {
    "ok"
}

pub fn main() {
    assert_eq!(AddTool.name(), "add");
    assert_eq!(Weather.name(), "get-weather_v2");
    assert_eq!(Weather.description(), "Current weather for a city");
    assert_eq!(Reexported.name(), "via_reexport");
}
