#![no_main]
//! The Responses reply parser on arbitrary bytes (the seeds are reply-shaped bodies).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    toolnexus_fuzz::check_reply(toolnexus::__private::parse_responses_reply(data));
});
