//! The ids of Gemini's calls: the provider's own from Gemini 3 on, else one made here for
//! an id-less call, and how the two are told apart when the transcript goes back.

/// Where ids made for id-less calls start. Gemini's own ids are short random strings, never
/// of this form, so an id with it is known not to be Gemini's and is left out of the
/// request.
const MADE_ID_PREFIX: &str = "toolnexus-gemini-";

/// The id of the `index`th call of a reply: the provider's when it sent one, else one made
/// from `nonce` (random per reply, so ids stay unique over a run resumed in another
/// process, where no counter would survive).
pub(super) fn call_id(given: Option<&str>, nonce: &str, index: usize) -> String {
    match given {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!("{MADE_ID_PREFIX}{nonce}-{index}"),
    }
}

/// A fresh nonce for [`call_id`].
pub(super) fn nonce() -> String {
    let mut simple = uuid::Uuid::new_v4().simple().to_string();
    simple.truncate(16);
    simple
}

/// Whether Gemini sent this id (rather than [`call_id`] making it).
pub(super) fn is_gemini_id(id: &str) -> bool {
    !id.is_empty() && !id.starts_with(MADE_ID_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_ids_are_told_from_geminis_and_differ_per_reply() {
        let (a, b) = (nonce(), nonce());
        assert_ne!(a, b);
        let made = call_id(None, &a, 0);
        assert!(!is_gemini_id(&made));
        assert_ne!(made, call_id(Some(""), &a, 1));
        assert_ne!(made, call_id(None, &b, 0));
        assert_eq!(call_id(Some("abc1"), &a, 0), "abc1");
        assert!(is_gemini_id("abc1") && !is_gemini_id(""));
    }
}
