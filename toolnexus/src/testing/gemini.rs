//! placeholder

use serde_json::{json, Value};

use super::reply::{Turn, Usage};
use super::strict::Issued;
use super::wire_parts::Exchange;

pub(crate) fn response(_turn: &Turn, _usage: Usage, _ex: &Exchange) -> Value {
    json!({})
}

pub(crate) fn stream(_turn: &Turn, _usage: Usage, _ex: &Exchange) -> String {
    String::new()
}

pub(crate) fn error_body(_status: u16, message: &str) -> Value {
    json!({"error": {"message": message}})
}

pub(crate) fn check(_body: &Value, _issued: &[&Issued]) -> Result<(), String> {
    Ok(())
}
