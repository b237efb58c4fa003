use toolnexus::tool;

/// Says hello
#[tool(output_schema)]
async fn hello() -> String {
    "hi".to_owned()
}

/// Says hello, with a value given to a flag
#[tool(output_schema = true)]
async fn hello_again() -> Json<u8> {
    Json(1)
}

#[derive(serde::Serialize)]
pub struct Sky {
    pub rain: bool,
}

/// Forecasts, declaring an output type that has no schema
#[tool(output_schema)]
async fn forecast() -> Sky {
    Sky { rain: false }
}

use toolnexus::Json;

fn main() {}
