//! JSON built from the fuzz input in the shapes the parsers read, so that mutations reach
//! past the first type error that raw bytes almost always hit.

use libfuzzer_sys::arbitrary::{Result as Built, Unstructured};
use serde_json::Value;

/// The keys the parsers and decoders look for: generated objects mostly use these.
const KEYS: &[&str] = &[
    "choices",
    "message",
    "content",
    "tool_calls",
    "function",
    "arguments",
    "name",
    "id",
    "type",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "text",
    "input",
    "role",
    "index",
    "results",
    "call_id",
    "output",
    "is_error",
    "isError",
    "pending",
    "metadata",
    "kind",
    "prompt",
    "url",
    "data",
    "expiresAt",
    "ok",
    "reason",
    "args",
    "status",
    "limit",
    "turns",
    "messages",
    "model",
    "item",
    "qty",
    "price",
    "tags",
    "shipping",
    "address",
    "notes",
    "priority",
    "extra",
];

/// Strings with a meaning somewhere: tags, roles, statuses, JSON fragments.
const WORDS: &[&str] = &[
    "function",
    "text",
    "tool_use",
    "thinking",
    "assistant",
    "user",
    "system",
    "tool_results",
    "done",
    "pending",
    "incomplete",
    "approval",
    "low",
    "high",
    "{}",
    "[]",
    "{\"item\":\"x\"}",
    "",
];

/// A JSON value built from the fuzz input, shaped like what the parsers read: objects keyed
/// mostly by the keys they look for, numbers at the edges of their types, and strings that
/// hold JSON text (as OpenAI's `arguments` do). Raw bytes rarely get that far.
pub fn shaped_json(data: &[u8]) -> Option<Value> {
    value(&mut Unstructured::new(data), 0).ok()
}

fn value(u: &mut Unstructured<'_>, depth: usize) -> Built<Value> {
    // Scalars only from depth 6 on: every level of JSON text inside a string doubles its
    // escapes, so deeper nesting would grow without bound.
    let most = if depth >= 6 { 3 } else { 7 };
    Ok(match u.int_in_range(0..=most)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => number(u)?,
        3 => Value::String(match u.arbitrary::<bool>()? {
            true => (*u.choose(WORDS)?).to_owned(),
            false => u.arbitrary()?,
        }),
        4 => Value::String(value(u, depth + 1)?.to_string()),
        5 => {
            let n = u.int_in_range(0..=4)?;
            Value::Array((0..n).map(|_| value(u, depth + 1)).collect::<Built<_>>()?)
        }
        6 => {
            let mut map = serde_json::Map::new();
            for _ in 0..u.int_in_range(0..=6)? {
                let key = match u.ratio(1, 8)? {
                    true => u.arbitrary()?,
                    false => (*u.choose(KEYS)?).to_owned(),
                };
                map.insert(key, value(u, depth + 1)?);
            }
            Value::Object(map)
        }
        // Around the argument depth limit (64) and the parser's recursion limit (128).
        _ => {
            let levels = u.int_in_range(60..=140)?;
            let deep = (0..levels).fold(Value::Null, |inner, _| Value::Array(vec![inner]));
            match u.arbitrary::<bool>()? {
                true => Value::String(deep.to_string()),
                false => deep,
            }
        }
    })
}

type Gen<'g> = dyn Fn(&mut Unstructured<'_>) -> Built<Value> + 'g;

/// An object of these fields, each mostly present and well-typed, sometimes absent, and
/// sometimes any value at all.
fn object(u: &mut Unstructured<'_>, fields: &[(&str, &Gen<'_>)]) -> Built<Value> {
    let mut map = serde_json::Map::new();
    for (key, good) in fields {
        match u.int_in_range(0..=9)? {
            0 => continue,
            1 => map.insert((*key).to_owned(), value(u, 3)?),
            _ => map.insert((*key).to_owned(), good(u)?),
        };
    }
    Ok(Value::Object(map))
}

fn array_of(u: &mut Unstructured<'_>, item: &Gen<'_>) -> Built<Value> {
    let n = u.int_in_range(0..=3)?;
    Ok(Value::Array((0..n).map(|_| item(u)).collect::<Built<_>>()?))
}

fn text(u: &mut Unstructured<'_>) -> Built<Value> {
    Ok(Value::String(u.arbitrary()?))
}

/// An OpenAI chat-completions body built from the fuzz input, well-formed in most places.
pub fn openai_reply(data: &[u8]) -> Option<Value> {
    let u = &mut Unstructured::new(data);
    let arguments = |u: &mut Unstructured<'_>| -> Built<Value> {
        Ok(Value::String(match u.arbitrary::<bool>()? {
            true => value(u, 0)?.to_string(),
            false => u.arbitrary()?,
        }))
    };
    let function =
        |u: &mut Unstructured<'_>| object(u, &[("name", &text), ("arguments", &arguments)]);
    let call = |u: &mut Unstructured<'_>| {
        object(
            u,
            &[
                ("id", &text),
                ("type", &|_| Ok("function".into())),
                ("function", &function),
            ],
        )
    };
    let message = |u: &mut Unstructured<'_>| {
        object(
            u,
            &[("content", &text), ("tool_calls", &|u| array_of(u, &call))],
        )
    };
    let choice = |u: &mut Unstructured<'_>| object(u, &[("message", &message)]);
    let usage = |u: &mut Unstructured<'_>| {
        object(
            u,
            &[
                ("prompt_tokens", &number),
                ("completion_tokens", &number),
                ("total_tokens", &number),
            ],
        )
    };
    object(
        u,
        &[("choices", &|u| array_of(u, &choice)), ("usage", &usage)],
    )
    .ok()
}

/// An Anthropic messages body built from the fuzz input, well-formed in most places.
pub fn anthropic_reply(data: &[u8]) -> Option<Value> {
    let u = &mut Unstructured::new(data);
    let block = |u: &mut Unstructured<'_>| -> Built<Value> {
        match u.int_in_range(0..=2)? {
            0 => object(u, &[("type", &|_| Ok("text".into())), ("text", &text)]),
            1 => object(
                u,
                &[
                    ("type", &|_| Ok("tool_use".into())),
                    ("id", &text),
                    ("name", &text),
                    ("input", &|u| value(u, 0)),
                ],
            ),
            _ => object(u, &[("type", &text), ("thinking", &text)]),
        }
    };
    let usage = |u: &mut Unstructured<'_>| {
        object(u, &[("input_tokens", &number), ("output_tokens", &number)])
    };
    object(
        u,
        &[
            ("type", &|_| Ok("message".into())),
            ("content", &|u| array_of(u, &block)),
            ("usage", &usage),
        ],
    )
    .ok()
}

fn number(u: &mut Unstructured<'_>) -> Built<Value> {
    Ok(match u.int_in_range(0..=5)? {
        0 => (*u.choose(&[0, 1, u64::MAX, u64::MAX - 1, 1 << 63, u32::MAX as u64])?).into(),
        1 => u.arbitrary::<u64>()?.into(),
        2 => u.arbitrary::<i64>()?.into(),
        3 => u.int_in_range(0..=300u16)?.into(),
        _ => {
            let f: f64 = u.arbitrary()?;
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
    })
}
