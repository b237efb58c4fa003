//! A continuation message as the answers it gives to the requests a task waits on.

use a2a::{Message, PartContent};
use serde_json::Value;
use toolnexus::{Answer, AnswerSetError, Asks, Request};

use super::request::ids;
use crate::error::A2aError;

/// The answers `message` gives to the requests `waiting` (in call order), each checked
/// against its request (a form's data against its schema, a gate's edited arguments
/// against the tool's) before anything runs.
///
/// A data part holding an `Answer`'s JSON answers by its `"id"`, which may be left out
/// when one request waits: `{"ok": true}`, `{"ok": false, "reason": "declined"}`,
/// `{"ok": true, "data": {…}}`. A message without data parts answers the one waiting
/// request with its text: `approve`, `yes` or `ok` approve; `decline` or `no` decline, and
/// text starting with `decline` declines with the rest as the person's note. After a
/// sign-in, any text confirms it; a form takes its data as a JSON object in the text too,
/// and a form of one text field (a question put in words) takes the text as that field.
///
/// ```
/// use a2a::{Message, Part, Role};
/// use toolnexus::Request;
/// use toolnexus_a2a::mapping::answers_of;
///
/// let buy = Request::new("approval", "Buy a gpu?").with_id("r1");
/// let said = |text: &str| Message::new(Role::User, vec![Part::text(text)]);
///
/// let yes = answers_of(&said("approve"), &[buy.clone()])?;
/// assert!(yes[0].ok && yes[0].id == "r1");
/// let no = answers_of(&said("decline: too dear"), &[buy.clone()])?;
/// assert!(!no[0].ok);
/// assert_eq!(no[0].note(), Some("too dear"));
/// assert!(answers_of(&said("maybe"), &[buy]).is_err());
/// # Ok::<(), toolnexus_a2a::A2aError>(())
/// ```
pub fn answers_of(message: &Message, waiting: &[Request]) -> Result<Vec<Answer>, A2aError> {
    if waiting.is_empty() {
        return Err(A2aError::NotAnAnswer(
            "the task waits on no request".to_owned(),
        ));
    }
    let data: Vec<&Value> = message
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Data(d) => Some(d),
            _ => None,
        })
        .collect();
    let answers = if data.is_empty() {
        vec![from_text(&text_of(message), only(waiting)?)?]
    } else {
        data.into_iter()
            .map(|value| from_data(value, waiting))
            .collect::<Result<Vec<Answer>, A2aError>>()?
    };
    toolnexus::check_answers(waiting, &answers).map_err(|e| match e {
        AnswerSetError::Unknown { id, .. } => A2aError::UnknownRequest {
            id,
            waiting: ids(waiting).into_iter().map(str::to_owned).collect(),
        },
        AnswerSetError::Invalid { id, source } => A2aError::InvalidAnswer { id, source },
        twice => A2aError::NotAnAnswer(twice.to_string()),
    })?;
    Ok(answers)
}

/// The one waiting request a message without ids answers.
fn only(waiting: &[Request]) -> Result<&Request, A2aError> {
    match waiting {
        [one] => Ok(one),
        _ => Err(A2aError::NotAnAnswer(format!(
            "{} requests wait ({}): answer each with a data part naming its \"id\"",
            waiting.len(),
            ids(waiting).join(", ")
        ))),
    }
}

/// The text parts of `message`, joined and trimmed.
fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|p| p.as_text())
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

/// A data part as an answer: an object with a boolean `ok`, and an `id` unless one
/// request waits.
fn from_data(value: &Value, waiting: &[Request]) -> Result<Answer, A2aError> {
    let Some(object) = value
        .as_object()
        .filter(|o| o.get("ok").is_some_and(Value::is_boolean))
    else {
        return Err(A2aError::NotAnAnswer(
            "a data part must hold an answer: {\"ok\": true}, {\"ok\": false, \"reason\": …} \
             or {\"ok\": true, \"data\": {…}}"
                .to_owned(),
        ));
    };
    let mut object = object.clone();
    let id = match object.get("id") {
        Some(Value::String(id)) => id.clone(),
        Some(_) => {
            return Err(A2aError::NotAnAnswer(
                "an answer's \"id\" must be a string".to_owned(),
            ))
        }
        None => only(waiting)?.id.clone(),
    };
    object.insert("id".to_owned(), Value::String(id));
    // The official SDKs carry a data part as protobuf's `Struct`, every number a double:
    // the whole ones are the integers the person gave.
    serde_json::from_value(Value::Object(object))
        .map(Answer::with_whole_numbers)
        .map_err(|e| A2aError::NotAnAnswer(format!("the data part is no answer: {e}")))
}

/// The name of a form's only field, when the form has one and it takes text.
fn lone_text_field(schema: &Value) -> Option<&str> {
    let properties = schema.get("properties")?.as_object()?;
    match properties.iter().next() {
        Some((name, field)) if properties.len() == 1 && field.get("type")? == "string" => {
            Some(name)
        }
        _ => None,
    }
}

/// The words that approve, and those that decline, compared without case.
const APPROVE: &[&str] = &["approve", "approved", "yes", "y", "ok", "okay"];
const DECLINE: &[&str] = &["decline", "declined", "no", "n"];

/// Text as the answer to `request`.
fn from_text(text: &str, request: &Request) -> Result<Answer, A2aError> {
    let id = request.id.as_str();
    let lower = text.to_lowercase();
    let word = lower.trim_end_matches(['.', '!']);
    if let Asks::SignIn { .. } = request.asks() {
        if text.is_empty() {
            return Err(A2aError::NotAnAnswer(
                "say anything (\"done\") once signed in".to_owned(),
            ));
        }
        return Ok(Answer::ok(id));
    }
    if DECLINE.contains(&word) {
        return Ok(Answer::decline(id, "declined"));
    }
    if lower.starts_with("decline") {
        // The word itself ("decline", "declined") is cut; the rest is the person's why.
        let rest = text.get("decline".len()..).unwrap_or_default();
        let rest = rest.strip_prefix(['d', 'D']).unwrap_or(rest);
        let note = rest.trim_start_matches([':', ',', '-', ';', ' ']).trim();
        return Ok(Answer::decline(id, "declined").with_note(note));
    }
    match request.asks() {
        Asks::Form { schema } => match serde_json::from_str::<Value>(text) {
            Ok(data @ Value::Object(_)) => Ok(Answer::ok(id).with_data(data)),
            // A question of one text field is answered in words, as a person replies.
            _ => match lone_text_field(schema) {
                Some(field) if !text.is_empty() => {
                    let mut data = serde_json::Map::new();
                    data.insert(field.to_owned(), Value::String(text.to_owned()));
                    Ok(Answer::ok(id).with_data(Value::Object(data)))
                }
                _ => Err(A2aError::NotAnAnswer(format!(
                    "request `{id}` is a form: answer with a data part {{\"ok\": true, \"data\": {{…}}}}"
                ))),
            },
        },
        _ if APPROVE.contains(&word) => Ok(Answer::ok(id)),
        _ => Err(A2aError::NotAnAnswer(format!(
            "answer request `{id}` with `approve` or `decline` (or `decline: <why>`)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use a2a::{Message, Part, Role};
    use serde_json::json;
    use toolnexus::{Refusal, Request};

    use super::answers_of;
    use crate::error::A2aError;

    fn said(text: &str) -> Message {
        Message::new(Role::User, vec![Part::text(text)])
    }

    fn data(values: &[serde_json::Value]) -> Message {
        Message::new(Role::User, values.iter().cloned().map(Part::data).collect())
    }

    fn buy(id: &str) -> Request {
        Request::new("approval", "Buy a gpu?").with_id(id)
    }

    fn form() -> Request {
        Request::new("input", "Where to?")
            .with_id("f1")
            .with_data(json!({"schema": {
                "type": "object",
                "properties": {"zip": {"type": "string"}},
                "required": ["zip"]
            }}))
    }

    #[test]
    fn words_approve_or_decline_whatever_their_case() {
        for yes in ["approve", "Yes", "OK", "ok.", "approved!"] {
            let a = answers_of(&said(yes), &[buy("r1")]).unwrap();
            assert!(a[0].ok, "{yes}");
        }
        for no in ["decline", "No", "DECLINED"] {
            let a = answers_of(&said(no), &[buy("r1")]).unwrap();
            assert_eq!(a[0].refusal(), Some(&Refusal::Declined), "{no}");
            assert_eq!(a[0].note(), None);
        }
        for (text, why) in [
            ("decline: too dear", "too dear"),
            ("Declined, we have one", "we have one"),
            ("decline - not now", "not now"),
        ] {
            let a = answers_of(&said(text), &[buy("r1")]).unwrap();
            assert!(!a[0].ok);
            assert_eq!(a[0].note(), Some(why), "{text}");
        }
        assert!(matches!(
            answers_of(&said("perhaps"), &[buy("r1")]),
            Err(A2aError::NotAnAnswer(_))
        ));
    }

    #[test]
    fn a_sign_in_takes_any_text_but_none() {
        let login = Request::new("authorization", "Sign in")
            .with_id("s1")
            .with_url("https://example.com/login");
        assert!(answers_of(&said("all done"), std::slice::from_ref(&login)).unwrap()[0].ok);
        assert!(answers_of(&said("  "), &[login]).is_err());
    }

    #[test]
    fn data_parts_answer_by_id_and_are_checked() {
        let waiting = [buy("r1"), buy("r2")];
        let both = data(&[
            json!({"id": "r2", "ok": false, "reason": "declined"}),
            json!({"id": "r1", "ok": true}),
        ]);
        let answers = answers_of(&both, &waiting).unwrap();
        assert_eq!((answers[0].id.as_str(), answers[0].ok), ("r2", false));
        assert_eq!((answers[1].id.as_str(), answers[1].ok), ("r1", true));

        let twice = data(&[
            json!({"id": "r1", "ok": true}),
            json!({"id": "r1", "ok": false}),
        ]);
        assert!(
            matches!(answers_of(&twice, &waiting), Err(A2aError::NotAnAnswer(m)) if m.contains("twice"))
        );
        let no_id = data(&[json!({"ok": true})]);
        assert!(
            matches!(answers_of(&no_id, &waiting), Err(A2aError::NotAnAnswer(m)) if m.contains("r1, r2"))
        );
        let forged = data(&[json!({"id": "r9", "ok": true})]);
        assert!(
            matches!(answers_of(&forged, &waiting), Err(A2aError::UnknownRequest { id, waiting }) if id == "r9" && waiting == ["r1", "r2"])
        );
        for not_an_answer in [
            json!({"yes": true}),
            json!("ok"),
            json!({"ok": "true"}),
            json!({"ok": true, "id": 3}),
        ] {
            assert!(
                matches!(
                    answers_of(&data(std::slice::from_ref(&not_an_answer)), &[buy("r1")]),
                    Err(A2aError::NotAnAnswer(_))
                ),
                "{not_an_answer}"
            );
        }
    }

    #[test]
    fn a_form_takes_fitting_data_in_a_data_part_or_as_json_text() {
        let fits = data(&[json!({"ok": true, "data": {"zip": "75001"}})]);
        assert_eq!(
            answers_of(&fits, &[form()]).unwrap()[0].data,
            Some(json!({"zip": "75001"}))
        );
        let as_text = answers_of(&said(r#"{"zip": "75001"}"#), &[form()]).unwrap();
        assert_eq!(as_text[0].data, Some(json!({"zip": "75001"})));
        let misfit = data(&[json!({"ok": true, "data": {"zip": 75001}})]);
        let misfit = answers_of(&misfit, &[form()]).unwrap_err();
        match &misfit {
            A2aError::InvalidAnswer { id, source } => {
                assert_eq!((id.as_str(), source.field.as_deref()), ("f1", Some("zip")));
            }
            other => panic!("a misfit: {other:?}"),
        }
        assert!(misfit.to_string().contains("zip"), "{misfit}");
        assert!(
            std::error::Error::source(&misfit).is_some(),
            "the cause is kept"
        );
        let in_words = answers_of(&said("75001"), &[form()]).unwrap();
        assert_eq!(
            in_words[0].data,
            Some(json!({"zip": "75001"})),
            "a form of one text field takes words"
        );
        let two_fields =
            Request::new("input", "Where to?")
                .with_id("f2")
                .with_data(json!({"schema": {
                    "type": "object",
                    "properties": {"zip": {"type": "string"}, "city": {"type": "string"}}
                }}));
        assert!(answers_of(&said("75001"), &[two_fields]).is_err());
        assert!(!answers_of(&said("decline"), &[form()]).unwrap()[0].ok);
    }

    #[test]
    fn nothing_waiting_takes_no_answer() {
        assert!(answers_of(&said("approve"), &[]).is_err());
    }
}
