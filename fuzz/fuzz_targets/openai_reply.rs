#![no_main]
//! The OpenAI chat-completions reply parser on arbitrary bytes and on reply-shaped JSON.

use libfuzzer_sys::fuzz_target;
use toolnexus::__hooks::decode_reply;
use toolnexus::Style;

fuzz_target!(|data: &[u8]| {
    // The bytes as a body, and the bytes as the recipe of a reply-shaped JSON body.
    toolnexus_fuzz::check_reply(decode_reply(Style::OpenAi, data));
    if let Some(shaped) = toolnexus_fuzz::openai_reply(data) {
        let body = shaped.to_string();
        toolnexus_fuzz::check_reply(decode_reply(Style::OpenAi, body.as_bytes()));
    }
});
