//! From a submitted answer form to an [`Answer`]: what a request lets a person do (its
//! shape), which button they pressed, and the values they typed, coerced by the schema.

use serde_json::{Map, Value};
use toolnexus::form::check_data;
use toolnexus::{Answer, Asks, Refusal, Request};

use super::form::{Coerced, Form};

/// The form field naming the button pressed.
pub(crate) const ACTION_FIELD: &str = "_action";
/// The form field holding an optional reason for declining.
pub(crate) const REASON_FIELD: &str = "_reason";

/// How a request is answered on the page: what it asks ([`Request::asks`]), as far as
/// the page can show it.
#[derive(Debug)]
pub(crate) enum Shape {
    /// A form from `data.schema`: submit it, or decline.
    Form(Form),
    /// A schema that is no form this page can show (not an object, or a field no control
    /// fits): only declining is possible.
    Unrenderable(String),
    /// A sign-in (`authorization`): sign in at the url, then confirm; or cancel.
    Authorization,
    /// A gate's request (a declared approval): approve, approve with edited arguments (a
    /// form from the tool's `argsSchema`, filled with the proposed ones), or decline.
    Gate(Form),
    /// A plain confirmation, or a gate whose tool takes no named arguments: approve or
    /// decline.
    Approval,
}

impl Shape {
    pub(crate) fn of(request: &Request) -> Shape {
        match request.asks() {
            Asks::Gate { schema, .. } => match Form::from_args_schema(schema) {
                Some(form) => Shape::Gate(form),
                // A tool without named arguments has nothing to edit.
                None => Shape::Approval,
            },
            Asks::SignIn { .. } => Shape::Authorization,
            Asks::Form { schema } => match Form::from_schema(schema) {
                Ok(form) => Shape::Form(form),
                Err(why) => Shape::Unrenderable(why),
            },
            _ => Shape::Approval,
        }
    }

    /// The form a person fills in for this shape, if it has one.
    pub(crate) fn form(&self) -> Option<&Form> {
        match self {
            Shape::Form(form) | Shape::Gate(form) => Some(form),
            _ => None,
        }
    }
}

/// A button on an answer form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Approve,
    Decline,
    SignedIn,
    Cancel,
    Submit,
    Edit,
}

impl Action {
    /// The value the button sends.
    pub(crate) fn value(self) -> &'static str {
        match self {
            Action::Approve => "approve",
            Action::Decline => "decline",
            Action::SignedIn => "signed-in",
            Action::Cancel => "cancel",
            Action::Submit => "submit",
            Action::Edit => "edit",
        }
    }

    fn parse(value: &str) -> Option<Action> {
        [
            Action::Approve,
            Action::Decline,
            Action::SignedIn,
            Action::Cancel,
            Action::Submit,
            Action::Edit,
        ]
        .into_iter()
        .find(|a| a.value() == value)
    }

    /// Whether a request of this shape offers the button.
    fn fits(self, shape: &Shape) -> bool {
        matches!(
            (shape, self),
            (Shape::Form(_), Action::Submit | Action::Decline)
                | (Shape::Unrenderable(_), Action::Decline)
                | (Shape::Authorization, Action::SignedIn | Action::Cancel)
                | (Shape::Approval, Action::Approve | Action::Decline)
                | (
                    Shape::Gate(_),
                    Action::Approve | Action::Edit | Action::Decline
                )
        )
    }
}

/// What a submitted answer form amounts to.
#[derive(Debug)]
pub(crate) enum Submission {
    /// An answer to record.
    Answer(Answer),
    /// A form whose values could not be read; shown again with the messages.
    Misfit(Coerced),
    /// No button this request offers was pressed.
    UnknownAction,
}

/// Reads a submitted answer form for `request`.
pub(crate) fn read(request: &Request, shape: &Shape, fields: &[(String, String)]) -> Submission {
    let value = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let Some(action) = value(ACTION_FIELD)
        .and_then(Action::parse)
        .filter(|a| a.fits(shape))
    else {
        return Submission::UnknownAction;
    };
    let id = request.id.clone();
    // The button gives the refusal's code; the person's own words go beside it as the note
    // (the model is told them: `declined/expired: <prompt> (reason: <words>)`), so a
    // cancelled sign-in with a note is still a cancel to whoever reads the code.
    let refusal = |code: Refusal| {
        let said = value(REASON_FIELD).unwrap_or_default();
        Answer::refuse(id.clone(), code).with_note(said.trim())
    };
    Submission::Answer(match action {
        Action::Approve | Action::SignedIn => Answer::ok(id),
        Action::Decline => refusal(Refusal::Declined),
        Action::Cancel => refusal(Refusal::Cancelled),
        Action::Submit | Action::Edit => {
            let (form, schema) = match shape {
                Shape::Form(form) => (form, request.asks().form()),
                Shape::Gate(form) => (form, request.asks().args_form()),
                _ => return Submission::UnknownAction,
            };
            match checked(form, schema, fields) {
                // `fits` paired Edit with a gate's shape, Submit with a form's.
                Ok(values) if action == Action::Edit => Answer::ok(id).with_args(values),
                Ok(values) => Answer::ok(id).with_data(values),
                Err(misfit) => return Submission::Misfit(misfit),
            }
        }
    })
}

/// The values of a submitted `form`, held against `schema`'s limits on the fields that
/// were read in the same round as what could not be read at all, so the person sees every
/// problem at once. (The inbox checks the answer again before it keeps it.)
fn checked(
    form: &Form,
    schema: Option<&Map<String, Value>>,
    fields: &[(String, String)],
) -> Result<Value, Coerced> {
    let mut coerced = form.coerce(fields);
    if let Some(schema) = schema {
        let values = Value::Object(coerced.values.clone());
        if let Err(misfit) = check_data(schema, Some(&values)) {
            for problem in misfit.problems {
                let Some(name) = problem.field else { continue };
                if form.fields.iter().any(|f| f.name == name) {
                    coerced
                        .errors
                        .entry(name)
                        .or_insert_with(|| capitalized(&problem.reason));
                }
            }
        }
    }
    if coerced.errors.is_empty() {
        Ok(Value::Object(coerced.values))
    } else {
        Err(coerced)
    }
}

/// The store's reasons read "must be at least 5 characters"; next to a field they start a
/// sentence.
pub(super) fn capitalized(reason: &str) -> String {
    let mut chars = reason.chars();
    match chars.next() {
        Some(first) => format!(
            "{}{}.",
            first.to_uppercase(),
            chars.as_str().trim_end_matches('.')
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn answer_of(submission: Submission) -> Answer {
        match submission {
            Submission::Answer(answer) => answer,
            other => panic!("not an answer: {other:?}"),
        }
    }

    #[test]
    fn approvals_and_refusals() {
        let request = Request::new("approval", "Buy?").with_id("r1");
        let shape = Shape::of(&request);
        let yes = answer_of(read(&request, &shape, &fields(&[("_action", "approve")])));
        assert_eq!(yes, Answer::ok("r1"));
        let no = answer_of(read(
            &request,
            &shape,
            &fields(&[("_action", "decline"), ("_reason", " too dear ")]),
        ));
        assert_eq!(
            no,
            Answer::refuse("r1", Refusal::Declined).with_note("too dear")
        );
        assert!(matches!(
            read(&request, &shape, &fields(&[("_action", "signed-in")])),
            Submission::UnknownAction
        ));
    }

    #[test]
    fn a_cancelled_sign_in_says_so() {
        let request = Request::new("authorization", "Sign in").with_id("a1");
        let shape = Shape::of(&request);
        let no = answer_of(read(&request, &shape, &fields(&[("_action", "cancel")])));
        assert_eq!(no, Answer::refuse("a1", Refusal::Cancelled));
        let typed = fields(&[("_action", "cancel"), ("_reason", "wrong account")]);
        let noted = answer_of(read(&request, &shape, &typed));
        assert_eq!(noted.refusal(), Some(&Refusal::Cancelled));
        assert_eq!(noted.note(), Some("wrong account"));
    }

    #[test]
    fn a_gate_is_approved_edited_or_declined() {
        let request = Request::new("approval", "Delete?")
            .with_id("g1")
            .with_data(json!({
                "tool": "delete",
                "args": {"path": "/a"},
                "argsSchema": {"type": "object",
                               "properties": {"path": {"type": "string"},
                                              "days": {"type": "integer", "minimum": 1}},
                               "required": ["path"]}
            }));
        let shape = Shape::of(&request);
        assert!(matches!(shape, Shape::Gate(_)), "{shape:?}");
        let yes = answer_of(read(&request, &shape, &fields(&[("_action", "approve")])));
        assert_eq!(yes, Answer::ok("g1"));
        let edit = [("_action", "edit"), ("f.path", "/b"), ("f.days", "2")];
        let edited = answer_of(read(&request, &shape, &fields(&edit)));
        assert_eq!(
            edited,
            Answer::ok("g1").with_args(json!({"path": "/b", "days": 2}))
        );
        let short = [("_action", "edit"), ("f.path", "/b"), ("f.days", "0")];
        match read(&request, &shape, &fields(&short)) {
            Submission::Misfit(coerced) => assert!(coerced.errors.contains_key("days")),
            other => panic!("a misfit: {other:?}"),
        }
        assert!(matches!(
            read(&request, &shape, &fields(&[("_action", "submit")])),
            Submission::UnknownAction
        ));
        let plain = Request::new("approval", "Buy?").with_id("p1");
        assert!(matches!(
            read(&plain, &Shape::of(&plain), &fields(&edit)),
            Submission::UnknownAction
        ));
    }

    #[test]
    fn each_shape_is_what_the_request_asks() {
        let not_an_object = Request::new("input", "Zip?").with_data(json!({"schema": "zip"}));
        assert!(matches!(Shape::of(&not_an_object), Shape::Unrenderable(_)));
        let sign_in_with_a_schema = Request::new("authorization", "Sign in")
            .with_data(json!({"schema": {"type": "object", "properties": {}}}));
        assert!(matches!(
            Shape::of(&sign_in_with_a_schema),
            Shape::Authorization
        ));
        let no_named_arguments = Request::new("approval", "Run?")
            .with_data(json!({"tool": "t", "args": {}, "argsSchema": {"type": "object"}}));
        assert!(matches!(Shape::of(&no_named_arguments), Shape::Approval));
        let half_a_gate =
            Request::new("approval", "Run?").with_data(json!({"tool": "t", "args": {}}));
        assert!(matches!(Shape::of(&half_a_gate), Shape::Approval));
    }

    #[test]
    fn forms_are_coerced_and_declining_skips_them() {
        let request = Request::new("input", "Where?").with_id("f1").with_data(json!({
            "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        }));
        let shape = Shape::of(&request);
        let ok = answer_of(read(
            &request,
            &shape,
            &fields(&[("_action", "submit"), ("f.n", "4")]),
        ));
        assert_eq!(ok.data, Some(json!({"n": 4})));
        assert!(matches!(
            read(
                &request,
                &shape,
                &fields(&[("_action", "submit"), ("f.n", "four")])
            ),
            Submission::Misfit(_)
        ));
        let no = answer_of(read(
            &request,
            &shape,
            &fields(&[("_action", "decline"), ("f.n", "x")]),
        ));
        assert!(!no.ok);
        assert!(matches!(
            read(&request, &shape, &fields(&[("_action", "approve")])),
            Submission::UnknownAction
        ));
    }
}
