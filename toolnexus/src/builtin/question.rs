//! The `question` tool: the model asks the user one or more questions and gets the answers.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::tool::BoxFuture;
use crate::tool_args::kind_of as kind;
use crate::{Refusal, Request, RequestKind, Tool, ToolContext, ToolResult, ToolSource};

const NAME: &str = "question";

/// Lets the model ask the user questions, optionally with choices, and wait for the answers.
///
/// Arguments: `{"questions": [{"question": "…", "header"?: "…", "options"?: ["…"],
/// "multiple"?: bool}, …]}`. The first call suspends with a [`Request`] of kind
/// `"question"` whose `prompt` lists each question's text in order, one per line, with
/// ` (options: a, b, c)` after a question that has options (the `header` is not shown), and
/// whose `data` is `{"questions": […]}` exactly as the model sent them, for a host that
/// renders its own form. The host answers with the answers in [`Answer::data`](crate::Answer)
/// (any JSON; `{"answers": […]}` is the customary shape), and the call re-run with that
/// answer returns the data as JSON text to the model (`{}` when the answer has none).
///
/// Arguments that do not fit the schema are an error naming the offending field, so the
/// model can correct itself. A refusal seen by a direct [`Tool::execute`] is an error too;
/// under [`LlmClient`](crate::LlmClient) a refusal never reaches the tool, the loop
/// answers it. Questions are never the way to ask for a secret: a login goes through an
/// `authorization` suspension.
///
/// ```
/// use serde_json::json;
/// use toolnexus::builtin::Question;
/// use toolnexus::{Answer, ToolContext, ToolResult, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let tk = Toolkit::builder().tool(Question).build().unwrap();
/// let args = json!({"questions": [
///     {"question": "Pick a color?", "header": "Color", "options": ["red", "green"]},
///     {"question": "Gift wrap?"},
/// ]});
/// let parked = tk.execute("question", args.clone(), ToolContext::default()).await;
/// let request = ToolResult::pending_of(&parked).unwrap();
/// assert_eq!(request.kind, "question");
/// assert_eq!(request.prompt, "Pick a color? (options: red, green)\nGift wrap?");
///
/// let answer = Answer::ok(&request.id).with_data(json!({"answers": [["red"], ["no"]]}));
/// let done = tk.execute("question", args, ToolContext::default().with_answer(answer)).await;
/// assert_eq!(done.output, r#"{"answers":[["red"],["no"]]}"#);
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Question;

impl Tool for Question {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Ask the user one or more questions and wait for the answers. Use it when a decision \
         or a fact only the user has is needed; offer options when the answer is a choice. \
         Never use it to ask for passwords, keys or other secrets."
    }

    fn input_schema(&self) -> &Value {
        static SCHEMA: OnceLock<Value> = OnceLock::new();
        SCHEMA.get_or_init(|| {
            json!({
                "type": "object",
                "properties": {
                    "questions": {
                        "type": "array",
                        "description": "Questions to ask",
                        "items": {
                            "type": "object",
                            "properties": {
                                "question": {"type": "string"},
                                "header": {"type": "string"},
                                "options": {"type": "array", "items": {"type": "string"}},
                                "multiple": {"type": "boolean"}
                            },
                            "required": ["question"]
                        }
                    }
                },
                "required": ["questions"],
                "additionalProperties": false
            })
        })
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(async move { run(args, ctx) })
    }

    fn source(&self) -> ToolSource<'_> {
        ToolSource::Builtin
    }
}

fn run(mut args: Value, ctx: ToolContext) -> ToolResult {
    let questions = match questions(&mut args) {
        Ok(questions) => questions,
        Err(problem) => {
            return ToolResult::error(format!("invalid arguments for {NAME}: {problem}"))
        }
    };
    match ctx.answer {
        None => {
            let prompt = render_prompt(&questions);
            let data = json!({ "questions": questions });
            ToolResult::pending(Request::new(RequestKind::Question, prompt).with_data(data))
        }
        Some(answer) if answer.ok => {
            let data = answer.data.unwrap_or_else(|| Value::Object(Map::new()));
            ToolResult::ok(data.to_string())
        }
        Some(answer) => ToolResult::error(format!(
            "{NAME}: not answered ({})",
            answer.refusal().unwrap_or(&Refusal::Declined)
        )),
    }
}

/// Takes the `questions` array out of the arguments after checking it against the schema.
fn questions(args: &mut Value) -> Result<Vec<Value>, String> {
    let Some(object) = args.as_object_mut() else {
        return Err(format!("expected a JSON object, got {}", kind(args)));
    };
    let questions = match object.remove("questions") {
        Some(Value::Array(questions)) => questions,
        Some(other) => {
            return Err(format!(
                "`questions` must be an array, got {}",
                kind(&other)
            ))
        }
        None => return Err("missing required argument `questions`".to_owned()),
    };
    for (i, item) in questions.iter().enumerate() {
        check_item(item)
            .map_err(|(field, problem)| format!("`questions[{i}]{field}` {problem}"))?;
    }
    Ok(questions)
}

/// Checks one question; an error is the path below the item (`.options[1]`) and what is
/// wrong there.
fn check_item(item: &Value) -> Result<(), (String, String)> {
    let wrong = |field: &str, expected: &str, got: &Value| {
        let problem = format!("must be {expected}, got {}", kind(got));
        Err((field.to_owned(), problem))
    };
    let Some(item) = item.as_object() else {
        return wrong("", "an object", item);
    };
    match item.get("question") {
        Some(Value::String(_)) => {}
        Some(other) => return wrong(".question", "a string", other),
        None => return Err((String::new(), "has no `question`".to_owned())),
    }
    if let Some(header) = item.get("header").filter(|h| !h.is_string()) {
        return wrong(".header", "a string", header);
    }
    if let Some(multiple) = item.get("multiple").filter(|m| !m.is_boolean()) {
        return wrong(".multiple", "a boolean", multiple);
    }
    match item.get("options") {
        Some(Value::Array(options)) => match options.iter().position(|o| !o.is_string()) {
            Some(j) => wrong(&format!(".options[{j}]"), "a string", &options[j]),
            None => Ok(()),
        },
        Some(other) => wrong(".options", "an array", other),
        None => Ok(()),
    }
}

/// The request's prompt, the same text every port renders: each question in order, with
/// ` (options: a, b, c)` when it has options, one per line, no trailing newline.
fn render_prompt(questions: &[Value]) -> String {
    let mut prompt = String::new();
    for (i, item) in questions.iter().enumerate() {
        if i > 0 {
            prompt.push('\n');
        }
        prompt.push_str(item["question"].as_str().unwrap_or_default());
        let options: Vec<&str> = match &item["options"] {
            Value::Array(options) => options.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !options.is_empty() {
            prompt.push_str(" (options: ");
            prompt.push_str(&options.join(", "));
            prompt.push(')');
        }
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt_of(questions: Value) -> String {
        match questions {
            Value::Array(questions) => render_prompt(&questions),
            other => panic!("not an array: {other}"),
        }
    }

    #[test]
    fn options_follow_their_question_and_headers_are_not_shown() {
        let prompt = prompt_of(json!([
            {"question": "Pick a color?", "header": "Choice", "options": ["red", "green"], "multiple": false},
            {"question": "Confirm?"},
        ]));
        assert_eq!(prompt, "Pick a color? (options: red, green)\nConfirm?");
    }

    #[test]
    fn empty_options_render_nothing_and_no_questions_render_an_empty_prompt() {
        assert_eq!(
            prompt_of(json!([{"question": "Just this", "options": []}])),
            "Just this"
        );
        assert_eq!(prompt_of(json!([])), "");
    }
}
