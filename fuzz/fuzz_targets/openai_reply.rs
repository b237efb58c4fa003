#![no_main]
//! The OpenAI chat-completions reply parser on arbitrary bytes and on reply-shaped JSON.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The bytes as a body, and the bytes as the recipe of a reply-shaped JSON body.
    toolnexus_fuzz::check_reply(toolnexus::__private::parse_openai_reply(data));
    if let Some(shaped) = toolnexus_fuzz::openai_reply(data) {
        let body = shaped.to_string();
        toolnexus_fuzz::check_reply(toolnexus::__private::parse_openai_reply(body.as_bytes()));
    }
});
