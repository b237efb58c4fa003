#![no_main]
//! The Gemini generateContent reply parser on arbitrary bytes (the seeds are reply-shaped bodies).

use libfuzzer_sys::fuzz_target;
use toolnexus::__hooks::decode_reply;
use toolnexus::Style;

fuzz_target!(|data: &[u8]| {
    toolnexus_fuzz::check_reply(decode_reply(Style::Gemini, data));
});
