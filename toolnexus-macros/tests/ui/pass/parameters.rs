//! Parameter and return types: optional, nested structs and enums, raw identifiers,
//! mutable bindings, no parameters at all, and the usual return types.
#![deny(warnings)]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolnexus::{tool, Json, Tool};

#[derive(Deserialize, JsonSchema)]
struct Address {
    street: String,
    zip: Option<String>,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Speed {
    Slow,
    Fast,
}

/// Ships a parcel
#[tool]
async fn ship(
    #[arg(description = "Where the parcel goes")] to: Address,
    speed: Option<Speed>,
    r#type: String,
    mut notes: Vec<String>,
) -> Json<Vec<String>> {
    notes.push(to.street);
    notes.push(r#type);
    let _ = (to.zip, speed.map(|s| serde_json::to_string(&s)));
    Json(notes)
}

/// Takes nothing
#[tool]
async fn ping() {}

/// Can fail
#[tool]
async fn fallible(n: u32) -> Result<String, std::num::TryFromIntError> {
    u8::try_from(n).map(|n| n.to_string())
}

/// Parameters named like the generated code's own variables
#[tool]
async fn shadows(args: String, ctx: u8, output: bool) -> String {
    format!("{args} {ctx} {output}")
}

/// Static text
#[tool]
pub async fn hello() -> &'static str {
    "hello"
}

pub fn main() {
    let schema = Ship.input_schema();
    assert_eq!(schema["required"], serde_json::json!(["to", "type", "notes"]));
    assert!(Ping.input_schema()["properties"].as_object().unwrap().is_empty());
    let names = Shadows.input_schema()["properties"].as_object().unwrap().len();
    assert_eq!(names, 3);
    let _ = (Fallible, Hello);
}
