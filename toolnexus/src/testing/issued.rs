//! The turns the mock sent, kept so later requests can be held to them, and the rules every
//! style's check shares: calls answered once each, in order; reasoning kept with its calls.

use super::reply::Turn;
use crate::Style;

/// A turn with reasoning the mock sent, kept so that later requests can be checked against
/// it.
#[derive(Clone, Debug)]
pub(crate) struct Issued {
    pub(crate) style: Style,
    /// The request number it answered (its ids and signatures derive from it).
    pub(crate) seq: usize,
    pub(crate) turn: Turn,
}

/// How the results after a turn fail to answer its calls.
pub(crate) enum Unanswered<'a> {
    /// These calls got no result.
    Missing(Vec<&'a str>),
    /// Every call got one, but not once each in call order.
    OutOfOrder,
}

/// Whether `answers` (the result ids after a turn, in order) answer `calls` (its call ids):
/// every call, once, in order.
pub(crate) fn answered<'a>(calls: &[&'a str], answers: &[&str]) -> Result<(), Unanswered<'a>> {
    let missing: Vec<&str> = calls
        .iter()
        .copied()
        .filter(|id| !answers.contains(id))
        .collect();
    if !missing.is_empty() {
        return Err(Unanswered::Missing(missing));
    }
    if answers != calls {
        return Err(Unanswered::OutOfOrder);
    }
    Ok(())
}

/// The issued turns an assistant message holding exactly these call ids may continue; none
/// when it holds no calls or continues no turn with reasoning. Scripts reuse call ids, so a
/// message is matched to every turn whose calls are exactly its own: a check passes when
/// the message keeps any one of them.
pub(crate) fn continued<'a>(issued: &[&'a Issued], call_ids: &[&str]) -> Vec<&'a Issued> {
    if call_ids.is_empty() {
        return Vec::new();
    }
    let candidates: Vec<&Issued> = issued
        .iter()
        .copied()
        .filter(|i| {
            i.turn
                .calls
                .iter()
                .map(|c| c.id.as_str())
                .eq(call_ids.iter().copied())
        })
        .collect();
    if candidates.iter().any(|i| i.turn.reasoning.is_none()) {
        return Vec::new();
    }
    candidates
}

/// The issued turns a request can still be held to. A script that repeats itself (the same
/// call ids in every run, one stub serving many runs) issues the same ids again with a new
/// signature; a request then shows those ids and the stub cannot tell which turn it
/// continues, so only the newest turn issuing them counts. A turn without calls is known by
/// its text.
pub(crate) fn newest<'a>(issued: impl DoubleEndedIterator<Item = &'a Issued>) -> Vec<&'a Issued> {
    let mut seen_ids: Vec<&str> = Vec::new();
    let mut seen_texts: Vec<&str> = Vec::new();
    let mut kept: Vec<&Issued> = Vec::new();
    for turn in issued.rev() {
        let shadowed = if turn.turn.calls.is_empty() {
            seen_texts.contains(&turn.turn.text.as_str())
        } else {
            turn.turn
                .calls
                .iter()
                .any(|c| seen_ids.contains(&c.id.as_str()))
        };
        seen_ids.extend(turn.turn.calls.iter().map(|c| c.id.as_str()));
        if turn.turn.calls.is_empty() {
            seen_texts.push(&turn.turn.text);
        }
        if !shadowed {
            kept.push(turn);
        }
    }
    kept.reverse();
    kept
}

/// Every value of `good` replaced in turn by odd ones (`null`, `0`, `""`, `[]`, `{}`,
/// `[null]`, `{"type": 1}`), each body handed to `check`; returns how many it refused.
/// A check given client JSON must answer every such body, never panic.
#[cfg(test)]
pub(crate) fn refusals_of_odd_bodies(
    good: &serde_json::Value,
    check: impl Fn(&serde_json::Value) -> Result<(), String>,
) -> usize {
    use serde_json::{json, Value};

    fn paths(value: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match value {
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    paths(v, format!("{at}/{i}"), out);
                }
            }
            Value::Object(map) => {
                for (k, v) in map {
                    paths(v, format!("{at}/{k}"), out);
                }
            }
            _ => {}
        }
    }
    let mut all = Vec::new();
    paths(good, String::new(), &mut all);
    let odd = [
        json!(null),
        json!(0),
        json!(""),
        json!([]),
        json!({}),
        json!([null]),
        json!({"type": 1}),
    ];
    let mut refused = 0;
    for path in &all {
        for value in &odd {
            let mut body = good.clone();
            if let Some(slot) = body.pointer_mut(path) {
                *slot = value.clone();
                refused += usize::from(check(&body).is_err());
            }
        }
    }
    refused
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::reply::ScriptedCall;

    fn turn(seq: usize, ids: &[&str], text: &str) -> Issued {
        Issued {
            style: Style::Gemini,
            seq,
            turn: Turn {
                text: text.into(),
                calls: ids
                    .iter()
                    .map(|id| ScriptedCall {
                        id: (*id).into(),
                        name: "f".into(),
                        arguments: crate::testing::reply::Arguments::Json(serde_json::json!({})),
                    })
                    .collect(),
                reasoning: Some("r".into()),
            },
        }
    }

    #[test]
    fn a_turn_reissuing_ids_or_text_shadows_the_older_one() {
        let all = [
            turn(1, &["a", "b"], ""),
            turn(2, &[], "hi"),
            turn(3, &["b"], ""),
            turn(4, &["c"], ""),
            turn(5, &[], "hi"),
        ];
        let kept: Vec<usize> = newest(all.iter()).iter().map(|t| t.seq).collect();
        assert_eq!(kept, [3, 4, 5]);
    }
}
