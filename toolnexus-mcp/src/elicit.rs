//! The one mapping between toolnexus suspensions and MCP elicitation, used in both
//! directions: a `Request` becomes `elicitation/create` parameters when serving, an
//! elicitation becomes a `Request` when consuming, and answers map to elicitation results
//! and back.

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, MetaObject,
    RequestMetaObject,
};
use serde_json::{Value, json};
use toolnexus::{Answer, Asks, Refusal, Request, RequestKind};

/// How a client must be able to elicit to answer a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Form,
    Url,
}

impl Mode {
    /// A sign-in with a URL goes to the browser; everything else is a form.
    pub(crate) fn of(request: &Request) -> Self {
        match request.asks() {
            Asks::SignIn { url: Some(_) } => Mode::Url,
            _ => Mode::Form,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Mode::Form => "form",
            Mode::Url => "URL",
        }
    }
}

/// The elicitation that asks a human what `request` needs ([`Request::asks`]).
///
/// A sign-in with a URL is URL mode. A form's schema (`data.schema`) is sent as it is:
/// toolnexus form schemas keep to MCP's flat subset, and one that is not (a schema that is
/// not even an object included) cannot be elicited. A plain `question` or `input` asks for
/// a single text `answer`; anything else (an approval, a gate, a sign-in without a URL) is
/// an empty form, where accepting is the answer.
pub(crate) fn to_elicitation(request: &Request) -> Result<ElicitRequestParams, String> {
    let asks = request.asks();
    if let Asks::SignIn { url: Some(url) } = asks {
        return Ok(ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: request.prompt.clone(),
            url: url.to_owned(),
            elicitation_id: request.id.clone(),
        });
    }
    let schema = match asks {
        Asks::Form { schema } => schema.clone(),
        Asks::Confirm if matches!(request.kind, RequestKind::Question | RequestKind::Input) => {
            json!({
                "type": "object",
                "properties": {"answer": {"type": "string", "title": "Answer"}},
                "required": ["answer"],
            })
        }
        _ => json!({"type": "object", "properties": {}}),
    };
    let requested_schema: ElicitationSchema = serde_json::from_value(schema)
        .map_err(|e| format!("its form schema is not an MCP elicitation schema: {e}"))?;
    let mut message = request.prompt.clone();
    if let Some(url) = &request.url {
        message.push('\n');
        message.push_str(url);
    }
    let approvals = request.approvals();
    if let Some(approvals) = &approvals {
        message.push('\n');
        message.push_str(&approvals.to_string());
    }
    let meta = approvals.and_then(|approvals| {
        let mut members = serde_json::Map::new();
        members.insert(
            APPROVALS_META.to_owned(),
            serde_json::to_value(approvals).ok()?,
        );
        Some(RequestMetaObject(MetaObject(members)))
    });
    Ok(ElicitRequestParams::FormElicitationParams {
        meta,
        message,
        requested_schema,
    })
}

/// The `_meta` key of how far a request's approvals came, when several people must give
/// them (`{"count", "quorum", "by"}`, as the inbox's `Parked::shown` writes them).
pub(crate) const APPROVALS_META: &str = "toolnexus/approvals";

/// The suspension an MCP server's elicitation becomes: a form is an `input` with its
/// schema at `data.schema`, a URL is an `authorization` with that `url`.
pub(crate) fn to_request(id: String, params: &ElicitRequestParams) -> Request {
    match params {
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            Request::new(RequestKind::Authorization, message.clone())
                .with_id(id)
                .with_url(url.clone())
        }
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
            Request::new(RequestKind::Input, message.clone())
                .with_id(id)
                .with_data(json!({ "schema": schema }))
        }
        // rmcp may learn new modes; one this crate does not know is still a question
        // a human can read.
        #[allow(unreachable_patterns)]
        other => Request::new(RequestKind::Input, format!("{other:?}")).with_id(id),
    }
}

/// The answer an elicitation result carries: accept is `ok` with the content as data;
/// decline and cancel are refusals with that code.
pub(crate) fn to_answer(id: &str, result: ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => match result.content {
            Some(content) => Answer::ok(id).with_data(content),
            None => Answer::ok(id),
        },
        ElicitationAction::Cancel => Answer::refuse(id, Refusal::Cancelled),
        // Decline, and any action a later protocol adds, is a refusal.
        _ => Answer::refuse(id, Refusal::Declined),
    }
}

/// The answer a client's response to request `id` carries (an `inputResponses` entry):
/// one that is not an elicitation result is invalid params, never taken for an answer.
pub(crate) fn response_to_answer(id: &str, response: Value) -> Result<Answer, rmcp::ErrorData> {
    let result = serde_json::from_value::<ElicitResult>(response).map_err(|e| {
        rmcp::ErrorData::invalid_params(
            format!("the response for `{id}` is not an elicitation result: {e}"),
            None,
        )
    })?;
    Ok(to_answer(id, result))
}

/// The elicitation result an answer stands for; the inverse of [`to_answer`]. The
/// refusal's code decides between cancel and decline, whatever the person wrote beside it
/// (an elicitation result has no room for their words).
pub(crate) fn to_result(answer: &Answer) -> ElicitResult {
    if answer.ok {
        let result = ElicitResult::new(ElicitationAction::Accept);
        return match &answer.data {
            Some(data) => result.with_content(data.clone()),
            None => result.with_content(json!({})),
        };
    }
    match answer.refusal() {
        Some(Refusal::Cancelled) => ElicitResult::new(ElicitationAction::Cancel),
        // Declined, expired, and any other code is a decline.
        _ => ElicitResult::new(ElicitationAction::Decline),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_forms_fit_the_elicitation_subset() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "zip": {"type": "string"},
                "express": {"type": "boolean"},
                "floor": {"type": "integer", "minimum": 0},
                "speed": {"type": "string", "enum": ["slow", "fast"]},
            },
            "required": ["city", "zip", "express"],
        });
        let request = Request::new("input", "Where?").with_data(json!({ "schema": schema }));
        let params = to_elicitation(&request).unwrap();
        let wire = serde_json::to_value(&params).unwrap();
        assert_eq!(wire["mode"], "form");
        assert_eq!(
            wire["requestedSchema"]["properties"]["express"]["type"],
            "boolean"
        );
        assert_eq!(
            wire["requestedSchema"]["properties"]["speed"]["enum"],
            json!(["slow", "fast"])
        );
        let back = to_request("r1".into(), &params);
        assert_eq!(back.kind, RequestKind::Input);
        assert_eq!(
            back.data.unwrap()["schema"]["required"],
            json!(["city", "zip", "express"])
        );
    }

    #[test]
    fn a_login_with_a_url_is_url_mode_keyed_by_the_request_id() {
        let request = Request::new(RequestKind::Authorization, "Sign in")
            .with_id("req-7")
            .with_url("https://example.com/login");
        match to_elicitation(&request).unwrap() {
            ElicitRequestParams::UrlElicitationParams {
                url,
                elicitation_id,
                ..
            } => {
                assert_eq!(url, "https://example.com/login");
                assert_eq!(elicitation_id, "req-7");
            }
            other => panic!("expected URL mode, got {other:?}"),
        }
    }

    #[test]
    fn answers_round_trip_through_elicitation_results() {
        for answer in [
            Answer::ok("a").with_data(json!({"city": "Paris"})),
            Answer::decline("a", "declined"),
            Answer::decline("a", "cancelled"),
        ] {
            assert_eq!(to_answer("a", to_result(&answer)), answer);
        }
    }

    #[test]
    fn the_refusal_code_decides_cancel_or_decline_whatever_the_note() {
        let cases = [
            (
                Answer::refuse("a", Refusal::Cancelled),
                ElicitationAction::Cancel,
            ),
            (
                Answer::refuse("a", Refusal::Cancelled).with_note("wrong account"),
                ElicitationAction::Cancel,
            ),
            (
                Answer::refuse("a", Refusal::Declined).with_note("cancelled"),
                ElicitationAction::Decline,
            ),
            (
                Answer::refuse("a", Refusal::Expired),
                ElicitationAction::Decline,
            ),
            (Answer::decline("a", "too dear"), ElicitationAction::Decline),
        ];
        for (answer, action) in cases {
            assert_eq!(to_result(&answer).action, action, "{answer:?}");
        }
    }

    #[test]
    fn a_schema_that_is_no_object_is_a_form_that_cannot_be_elicited() {
        for schema in [json!("zip"), json!(null)] {
            let request = Request::new("question", "Zip?").with_data(json!({ "schema": schema }));
            assert_eq!(Mode::of(&request), Mode::Form);
            let error = to_elicitation(&request).unwrap_err();
            assert!(error.contains("not an MCP elicitation schema"), "{error}");
        }
    }

    #[test]
    fn a_gate_and_a_sign_in_without_a_url_are_empty_forms() {
        let gate = Request::new("approval", "Delete?").with_data(json!({
            "tool": "delete", "args": {"path": "/a"}, "argsSchema": {"type": "object"}
        }));
        let bare = Request::new(RequestKind::Authorization, "Sign in");
        for request in [gate, bare] {
            assert_eq!(Mode::of(&request), Mode::Form);
            let wire = serde_json::to_value(to_elicitation(&request).unwrap()).unwrap();
            assert_eq!(
                wire["requestedSchema"]["properties"],
                json!({}),
                "{request:?}"
            );
        }
    }

    #[test]
    fn a_schema_outside_the_subset_is_refused_with_a_reason() {
        let request = Request::new("input", "Where?").with_data(
            json!({"schema": {"type": "object", "properties": {"a": {"type": "array"}}}}),
        );
        let error = to_elicitation(&request).unwrap_err();
        assert!(error.contains("not an MCP elicitation schema"), "{error}");
    }

    #[test]
    fn a_request_several_people_approve_says_how_far_they_came() {
        let request = Request::new("approval", "Pay?").with_data(json!({
            "approvals": {"count": 1, "quorum": 2, "by": ["ada@example.com"]}
        }));
        let wire = serde_json::to_value(to_elicitation(&request).unwrap()).unwrap();
        assert_eq!(wire["message"], "Pay?\n1 of 2 approvals (ada@example.com)");
        assert_eq!(wire["_meta"][APPROVALS_META]["count"], 1, "{wire}");
        let plain =
            serde_json::to_value(to_elicitation(&Request::new("approval", "Pay?")).unwrap());
        assert!(plain.unwrap().get("_meta").is_none());
    }
}
