#![no_main]
//! The deserializers of everything a host persists or receives from elsewhere: `Request`,
//! `Answer`, `ToolResult`, `Message` and whole transcripts and run results. What loads must
//! also survive a second round trip unchanged.

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolnexus::{Answer, Message, Request, RunResult, ToolResult};
use toolnexus_fuzz::round_trip;

fuzz_target!(|data: &[u8]| {
    // The bytes as JSON text, and the bytes as the recipe of wire-shaped JSON.
    load_all(data);
    if let Some(shaped) = toolnexus_fuzz::shaped_json(data) {
        load_all(shaped.to_string().as_bytes());
    }
});

fn load_all(data: &[u8]) {
    if let Ok(r) = serde_json::from_slice::<Request>(data) {
        round_trip(&r);
    }
    if let Ok(a) = serde_json::from_slice::<Answer>(data) {
        round_trip(&a);
        let _ = a.data_as::<Value>();
        let _ = a.data_as::<toolnexus_fuzz::Shipping>();
    }
    if let Ok(t) = serde_json::from_slice::<ToolResult>(data) {
        round_trip(&t);
        if let Some(request) = ToolResult::pending_of(&t) {
            assert!(t.is_pending());
            round_trip(&request);
        }
    }
    if let Ok(m) = serde_json::from_slice::<Message>(data) {
        round_trip(&m);
    }
    if let Ok(ms) = serde_json::from_slice::<Vec<Message>>(data) {
        round_trip(&ms);
    }
    if let Ok(r) = serde_json::from_slice::<RunResult>(data) {
        round_trip(&r);
    }
}
