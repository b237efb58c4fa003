//! Bounds on what untrusted parties hand the loop. Provider replies are capped where they
//! are read ([`transport`](crate::client::http::transport), the SSE reader); tool outputs are capped here,
//! before they enter the transcript.

/// Cuts an output longer than `limit` bytes to its first `limit` bytes (at a character
/// boundary) and appends a marker line saying how long it was, so the model knows it sees
/// only part of it.
pub(crate) fn cap_output(output: &mut String, limit: usize) {
    if output.len() <= limit {
        return;
    }
    let original = output.len();
    let mut cut = limit;
    while !output.is_char_boundary(cut) {
        cut -= 1;
    }
    output.truncate(cut);
    output.push_str(&format!(
        "\n[output truncated: {original} bytes, only the first {limit} are shown]"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_outputs_are_untouched_long_ones_cut_at_a_char_boundary() {
        let mut short = "abc".to_owned();
        cap_output(&mut short, 3);
        assert_eq!(short, "abc");

        let mut long = "aé".repeat(4); // 12 bytes; byte 4 is inside an `é`
        cap_output(&mut long, 4);
        assert_eq!(
            long,
            "aéa\n[output truncated: 12 bytes, only the first 4 are shown]"
        );
    }
}
