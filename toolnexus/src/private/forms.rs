//! The form a suspension asks its typed answer with (`request.data["schema"]`), and the two
//! ways it gets there. They settle a `schema` key already in `data` differently on purpose:
//! `pending!(…, answer = T)` ([`ask_form`]) names the form explicitly, so a second one is a
//! mistake to report; the form known from an `Option<Answered<T>>` parameter
//! ([`attach_form`]) is only a fallback, so whatever the body put there stands.

use serde_json::{Map, Value};

use crate::{Request, ToolResult};

use crate::tool_args::kind_of;

/// The form of a tool's typed answers, as [`Tool::answer_schema`](crate::Tool) gives it.
pub type FormRef<'a> = Option<Result<&'a Value, &'a str>>;

/// What the type of `pending!(…, answer = T)` must be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot describe an answer: it must implement `schemars::JsonSchema`",
    label = "`answer = ..` sends this type's schema to the host as the form to fill in",
    note = "derive it on a struct with named fields, through toolnexus's re-exports: `#[derive(toolnexus::serde::Deserialize, toolnexus::schemars::JsonSchema)]` with `#[serde(crate = \"toolnexus::serde\")]` and `#[schemars(crate = \"toolnexus::schemars\")]`"
)]
pub trait AnswerForm: schemars::JsonSchema {}

impl<T: schemars::JsonSchema> AnswerForm for T {}

/// A type as a person spells it: every path cut to its last segment, so
/// `alloc::vec::Vec<alloc::string::String>` reads `Vec<String>`.
fn spelled(type_name: &str) -> String {
    let mut out = String::with_capacity(type_name.len());
    let mut word = String::new();
    let mut chars = type_name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            // A path separator: what came before it was a module (or a type's path prefix).
            chars.next();
            word.clear();
        } else if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            out.push_str(&word);
            word.clear();
            out.push(c);
        }
    }
    out.push_str(&word);
    out
}

/// The form schema `pending!(…, answer = T)` asks with, or why `T` cannot be a form.
pub fn answer_schema<T: AnswerForm>() -> Result<Value, String> {
    let raw = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    crate::form::form_schema(&raw.to_value()).map_err(|reason| {
        format!(
            "`{}` cannot be asked for as an answer: {reason}",
            spelled(std::any::type_name::<T>())
        )
    })
}

/// The suspension of `pending!(…, answer = T)`: the form schema goes to
/// `request.data["schema"]`, next to what `data = …` holds.
pub fn ask_form(
    request: Request,
    data: Option<Value>,
    schema: &Result<Value, String>,
) -> ToolResult {
    let schema = match schema {
        Ok(schema) => schema.clone(),
        Err(reason) => {
            tracing::error!(%reason, "pending!(answer = ..) cannot build its form");
            return ToolResult::error(format!("pending!(answer = ..): {reason}"));
        }
    };
    let mut data = match data {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return ToolResult::error(format!(
                "pending!: `data` must be a JSON object to carry the answer schema, got {}",
                kind_of(&other)
            ))
        }
    };
    if data.contains_key("schema") {
        return ToolResult::error(
            "pending!: `data` already has a `schema` key, where `answer = ..` puts its form; \
             rename the key or drop `answer`",
        );
    }
    data.insert("schema".to_owned(), schema);
    ToolResult::pending(request.with_data(Value::Object(data)))
}

/// The data of `pending!(…, responders = [..])`: `data` (an object, or nothing) with the
/// people and groups who may answer at `responders`, where the inbox reads them. An error
/// (the call's result then) rather than a request anyone could answer.
pub fn with_responders<I, S>(data: Option<Value>, responders: I) -> Result<Value, String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut data = match data {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(format!(
                "pending!: `data` must be a JSON object to carry `responders`, got {}",
                kind_of(&other)
            ))
        }
    };
    if data.contains_key("responders") {
        return Err(
            "pending!: `data` already has a `responders` key; name the responders once".to_owned(),
        );
    }
    let list: Vec<Value> = responders
        .into_iter()
        .map(|r| Value::String(r.into()))
        .collect();
    if list.is_empty() {
        return Err(
            "pending!: `responders` is empty, so nobody could answer; leave it out to let \
             the host's rules decide"
                .to_owned(),
        );
    }
    data.insert("responders".to_owned(), Value::Array(list));
    Ok(Value::Object(data))
}

/// Gives a suspension the tool's answer form when it asks without one (`pending!` with no
/// `answer = T` in a tool taking `Option<Answered<T>>`): the form is known from the
/// signature. A request that already has a `schema`, or `data` that is not an object, is
/// left as it is.
pub fn attach_form(result: ToolResult, form: FormRef<'_>) -> ToolResult {
    let Some(form) = form else {
        return result;
    };
    let Some(mut request) = ToolResult::pending_of(&result) else {
        return result;
    };
    let form = match form {
        Ok(form) => form,
        Err(reason) => return ToolResult::error(format!("cannot ask for an answer: {reason}")),
    };
    match &mut request.data {
        Some(Value::Object(data)) if data.contains_key("schema") => return result,
        Some(Value::Object(data)) => {
            data.insert("schema".to_owned(), form.clone());
        }
        Some(_) => return result,
        None => request.data = Some(serde_json::json!({ "schema": form })),
    }
    let mut result = result;
    result.set_pending(&request);
    result
}

#[cfg(test)]
mod tests {
    use super::spelled;

    #[test]
    fn types_are_spelled_without_their_paths() {
        let spell = |name: &str| spelled(name);
        assert_eq!(spell(std::any::type_name::<Vec<String>>()), "Vec<String>");
        assert_eq!(
            spell(std::any::type_name::<
                Option<std::collections::HashMap<String, u8>>,
            >()),
            "Option<HashMap<String, u8>>"
        );
        assert_eq!(
            spell(std::any::type_name::<(u8, [bool; 2], &str)>()),
            "(u8, [bool; 2], &str)"
        );
        assert_eq!(spell("my_app::forms::Shipping"), "Shipping");
        assert_eq!(spell("dyn core::fmt::Debug"), "dyn Debug");
    }
}
