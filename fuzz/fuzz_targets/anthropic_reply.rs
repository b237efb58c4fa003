#![no_main]
//! The Anthropic messages reply parser on arbitrary bytes and on reply-shaped JSON.

use libfuzzer_sys::fuzz_target;
use toolnexus::__hooks::decode_reply;
use toolnexus::Style;

fuzz_target!(|data: &[u8]| {
    // The bytes as a body, and the bytes as the recipe of a reply-shaped JSON body.
    toolnexus_fuzz::check_reply(decode_reply(Style::Anthropic, data));
    if let Some(shaped) = toolnexus_fuzz::anthropic_reply(data) {
        let body = shaped.to_string();
        toolnexus_fuzz::check_reply(decode_reply(Style::Anthropic, body.as_bytes()));
    }
});
