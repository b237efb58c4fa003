//! The options of `#[tool(...)]` (its declared `approval` among them) and `#[toolbox(...)]`, the helper attributes on
//! parameters (`#[arg(...)]`, `#[answer]`, `#[context]`, and schemars' own
//! `#[schemars(...)]`, passed through to the schema) and descriptions from doc comments.

use proc_macro2::{Span, TokenStream};
use syn::{Attribute, Expr, Lit, LitStr, Meta};

use crate::diag::Errors;
use crate::named::{Named, NamedArgs, Spec, Value};
use crate::template::Template;

const TOOL_SPEC: Spec = Spec {
    context: "#[tool]",
    exprs: &["name", "description", "struct_name", "crate", "approval"],
    types: &[],
    flags: &["output_schema", "approval"],
    lists: &["approval"],
    example: "#[tool(name = \"get_weather\", description = \"Current weather for a city\")]",
};

const APPROVAL_SPEC: Spec = Spec {
    context: "approval(...)",
    exprs: &["prompt", "when", "responders", "quorum", "edits"],
    types: &[],
    flags: &["rememberable", "not_requester"],
    lists: &[],
    example: "approval(prompt = \"Refund {amount}?\", when = amount > 100.0)",
};

const TOOLBOX_SPEC: Spec = Spec {
    context: "#[toolbox]",
    exprs: &["crate"],
    types: &[],
    flags: &[],
    lists: &[],
    example: "#[toolbox(crate = \"::toolnexus\")]",
};

const ARG_SPEC: Spec = Spec {
    context: "#[arg]",
    exprs: &["description", "default", "rename"],
    types: &[],
    flags: &[],
    lists: &[],
    example:
        "#[arg(description = \"The city to look up\", default = \"Paris\", rename = \"city\")]",
};

/// What `#[tool(...)]` says.
#[derive(Default)]
pub(crate) struct ToolOptions {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) struct_name: Option<LitStr>,
    pub(crate) krate: Option<LitStr>,
    /// `output_schema`: declare the schema of the returned value.
    pub(crate) output_schema: Option<Span>,
    pub(crate) approval: Option<ApprovalOption>,
}

/// A declared approval: `approval` (always ask, in the default words),
/// `approval = "Delete {path}?"` (always ask, in these words) or
/// `approval(prompt = "...", when = CONDITION, responders = ["group:NAME", "id"])` (any
/// part may be left out).
#[derive(Clone)]
pub(crate) struct ApprovalOption {
    /// `None`: the runtime's default words, which show the tool's name and arguments.
    pub(crate) prompt: Option<Template>,
    /// `None`: every call asks.
    pub(crate) when: Option<Expr>,
    /// Who may answer, as written (never empty, no repeats); `None`: anyone.
    pub(crate) responders: Option<Vec<LitStr>>,
    /// How many distinct people must approve, when more than one (`quorum = 2`).
    pub(crate) quorum: Option<syn::LitInt>,
    /// Which arguments a person may change; `None`: any.
    pub(crate) edits: Option<EditsOption>,
    /// `rememberable`: an approval may be remembered although the rule names responders or
    /// a quorum.
    pub(crate) rememberable: bool,
    /// `not_requester`: the person who asked for the run may not approve it.
    pub(crate) not_requester: bool,
}

/// `edits = false` or `edits = ["memo", …]`.
#[derive(Clone)]
pub(crate) enum EditsOption {
    /// `edits = false`: approve as proposed, or refuse.
    None,
    /// The arguments a person may change, by their names on the wire, as written.
    Only(Vec<LitStr>),
}

/// How `edits` is written, for messages.
const EDITS_EXAMPLE: &str = "edits = [\"memo\"]` or `edits = false";

/// `edits = false`, or a non-empty list of string literals naming arguments, none twice.
fn parse_edits(expr: &Expr, errors: &mut Errors) -> Option<EditsOption> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(b), ..
        }) if !b.value => Some(EditsOption::None),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(b), ..
        }) => {
            errors.at(
                b,
                "any argument may be edited by default, so leave `edits` out; write \
                 `edits = false` to forbid edits, or name the arguments that may change",
            );
            None
        }
        Expr::Array(array) if array.elems.is_empty() => {
            errors.at(
                array,
                "`edits` names no argument; write `edits = false` to forbid edits, or name \
                 the arguments a person may change, `edits = [\"memo\"]`",
            );
            None
        }
        Expr::Array(array) => {
            let not_a_string = "expected a string literal naming an argument a person may \
                                change, `edits = [\"memo\"]`";
            let found = distinct_strings(array, "edits", not_a_string, |_| None, errors)?;
            Some(EditsOption::Only(found))
        }
        other => {
            errors.at(
                other,
                format_args!("expected which arguments a person may change, `{EDITS_EXAMPLE}`"),
            );
            None
        }
    }
}

/// How `quorum` is written, for messages.
const QUORUM_EXAMPLE: &str = "quorum = 2, responders = [\"group:finance\"]";

/// `quorum = N`: an integer literal of at least 2 (one approval is what every approval
/// needs), and, when `responders` name only people, no more than they are.
fn parse_quorum(
    expr: &Expr,
    responders: Option<&[LitStr]>,
    errors: &mut Errors,
) -> Option<syn::LitInt> {
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Int(lit), ..
    }) = expr
    else {
        errors.at(
            expr,
            format_args!(
                "expected how many distinct people must approve as an integer literal, \
                 `{QUORUM_EXAMPLE}`"
            ),
        );
        return None;
    };
    let n = match lit.base10_parse::<u32>() {
        Ok(n) => n,
        Err(_) => {
            errors.at(
                lit,
                format_args!("expected a whole number of people, `{QUORUM_EXAMPLE}`"),
            );
            return None;
        }
    };
    if n < 2 {
        errors.at(
            lit,
            "a quorum counts at least 2 people: one approval is what every approval needs, \
             so leave `quorum` out",
        );
        return None;
    }
    if let Some(list) = responders {
        let people = list.iter().all(|r| !r.value().starts_with("group:"));
        if people && (list.len() as u32) < n {
            errors.at(
                lit,
                format_args!(
                    "`quorum = {n}` but `responders` names only {} people and no group, so it \
                     could never be reached; name more people or a group",
                    list.len()
                ),
            );
            return None;
        }
    }
    Some(lit.clone())
}

/// How `responders` is written, for messages.
const RESPONDERS_EXAMPLE: &str = "responders = [\"group:finance\", \"ada@example.com\"]";

/// `responders = ["group:finance", "ada@example.com"]`: a non-empty array of string
/// literals, each naming someone, none twice. Every mistake is reported, at its element.
fn parse_responders(expr: &Expr, errors: &mut Errors) -> Option<Vec<LitStr>> {
    let Expr::Array(array) = expr else {
        errors.at(
            expr,
            format_args!(
                "expected a list of people and groups who may answer, `{RESPONDERS_EXAMPLE}`"
            ),
        );
        return None;
    };
    if array.elems.is_empty() {
        errors.at(
            array,
            format_args!(
                "`responders` is empty, so nobody could answer; name people by id and groups \
                 as `group:NAME`, `{RESPONDERS_EXAMPLE}`, or leave `responders` out to let \
                 anyone answer"
            ),
        );
        return None;
    }
    let not_a_string = format!(
        "expected a string literal naming a person by id or a group as `group:NAME`, \
         `{RESPONDERS_EXAMPLE}`"
    );
    let nobody = |lit: &LitStr| {
        let text = lit.value();
        (text.trim().is_empty() || text == "group:").then(|| {
            "this names nobody: write a person's id (`\"ada@example.com\"`) or a group with \
             its name (`\"group:finance\"`)"
                .to_owned()
        })
    };
    distinct_strings(array, "responders", &not_a_string, nobody, errors)
}

/// The string literals of a `key = [...]` list, each once. Every element that is not a
/// string literal (`not_a_string` says what to write), that `refuse` turns down (with its
/// words), or that repeats an earlier one is reported at the element.
fn distinct_strings(
    array: &syn::ExprArray,
    key: &str,
    not_a_string: &str,
    refuse: impl Fn(&LitStr) -> Option<String>,
    errors: &mut Errors,
) -> Option<Vec<LitStr>> {
    let mut found: Vec<LitStr> = Vec::with_capacity(array.elems.len());
    let mut ok = true;
    for elem in &array.elems {
        let Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) = elem
        else {
            errors.at(elem, not_a_string);
            ok = false;
            continue;
        };
        let text = lit.value();
        if let Some(why) = refuse(lit) {
            errors.at(lit, why);
            ok = false;
        } else if found.iter().any(|f| f.value() == text) {
            errors.at(
                lit,
                format_args!("`{text:?}` is named twice in `{key}`; name each once"),
            );
            ok = false;
        } else {
            found.push(lit.clone());
        }
    }
    ok.then_some(found)
}

impl ApprovalOption {
    fn parse(named: &Named, errors: &mut Errors) -> Option<ApprovalOption> {
        let mut edits = None;
        let mut rememberable = false;
        let mut not_requester = false;
        let (prompt, when, responders, quorum) = match &named.value {
            Value::Flag | Value::Type(_) => (None, None, None, None),
            Value::Expr(Expr::Lit(syn::ExprLit {
                lit: Lit::Str(lit), ..
            })) => (Some(lit.clone()), None, None, None),
            Value::Expr(other) => {
                errors.at(
                    other,
                    "expected the prompt as a string literal, `approval = \"Delete {path}?\"`, \
                     or a condition with it, `approval(prompt = \"...\", when = CONDITION)`",
                );
                return None;
            }
            Value::List(group) => {
                let args = NamedArgs::parse(group.stream(), &APPROVAL_SPEC, errors);
                let prompt = args.get("prompt").and_then(|n| n.lit_str(errors));
                let when = match args.get("when").map(|n| &n.value) {
                    Some(Value::Expr(expr)) => Some(expr.clone()),
                    _ => None,
                };
                let responders = match args.get("responders").map(|n| &n.value) {
                    Some(Value::Expr(expr)) => Some(parse_responders(expr, errors)?),
                    _ => None,
                };
                let quorum = match args.get("quorum").map(|n| &n.value) {
                    Some(Value::Expr(expr)) => {
                        Some(parse_quorum(expr, responders.as_deref(), errors)?)
                    }
                    _ => None,
                };
                edits = match args.get("edits").map(|n| &n.value) {
                    Some(Value::Expr(expr)) => Some(parse_edits(expr, errors)?),
                    _ => None,
                };
                rememberable = args.get("rememberable").is_some();
                not_requester = args.get("not_requester").is_some();
                (prompt, when, responders, quorum)
            }
        };
        let prompt = match prompt.as_ref().map(Template::parse) {
            Some(Ok(template)) => Some(template),
            Some(Err(error)) => {
                errors.push(error);
                return None;
            }
            None => None,
        };
        Some(ApprovalOption {
            prompt,
            when,
            responders,
            quorum,
            edits,
            rememberable,
            not_requester,
        })
    }
}

impl ToolOptions {
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> ToolOptions {
        let args = NamedArgs::parse(tokens, &TOOL_SPEC, errors);
        let approval = args
            .get("approval")
            .and_then(|n| ApprovalOption::parse(n, errors));
        let mut str_of = |key: &str| args.get(key).and_then(|n| n.lit_str(errors));
        ToolOptions {
            name: str_of("name"),
            description: str_of("description"),
            struct_name: str_of("struct_name"),
            krate: str_of("crate"),
            output_schema: args
                .get("output_schema")
                .filter(|n| matches!(n.value, Value::Flag))
                .map(|n| n.key.span()),
            approval,
        }
    }
}

/// What `#[toolbox(...)]` says.
pub(crate) struct ToolboxOptions {
    pub(crate) krate: Option<LitStr>,
}

impl ToolboxOptions {
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> ToolboxOptions {
        let args = NamedArgs::parse(tokens, &TOOLBOX_SPEC, errors);
        ToolboxOptions {
            krate: args.get("crate").and_then(|n| n.lit_str(errors)),
        }
    }
}

/// The helper attributes found on one parameter.
#[derive(Default)]
pub(crate) struct ParamAttrs {
    /// `#[arg(description = "...")]`
    pub(crate) description: Option<String>,
    /// `#[arg(default = EXPR)]`: the value when the model leaves the argument out.
    pub(crate) default: Option<Expr>,
    /// `#[arg(rename = "...")]`: the property's name on the wire.
    pub(crate) rename: Option<LitStr>,
    /// `#[schemars(...)]`, passed through to the property's schema.
    pub(crate) schemars: Vec<Attribute>,
    /// Where `#[arg(...)]` was written, to reject it on injected parameters.
    pub(crate) arg: Option<Span>,
    /// `#[answer]`: inject the host's answer whatever the type is spelled like.
    pub(crate) answer: Option<Span>,
    /// `#[context]`: inject the tool context whatever the type is spelled like.
    pub(crate) context: Option<Span>,
}

const HELPERS: &[&str] = &["arg", "answer", "context", "schemars"];

/// Whether `attr` is one of ours, to be removed before the fn is re-emitted (the compiler
/// would reject it on a parameter).
pub(crate) fn is_helper(attr: &Attribute) -> bool {
    HELPERS.iter().any(|h| attr.path().is_ident(h))
}

/// Reads (and removes) the helper attributes of one parameter.
pub(crate) fn take_param_attrs(attrs: &mut Vec<Attribute>, errors: &mut Errors) -> ParamAttrs {
    let mut found = ParamAttrs::default();
    for attr in attrs.iter().filter(|a| is_helper(a)) {
        let span = attr.path().segments[0].ident.span();
        if attr.path().is_ident("arg") {
            let tokens = match &attr.meta {
                Meta::List(list) => list.tokens.clone(),
                _ => {
                    errors.at(attr, format_args!("expected `{}`", ARG_SPEC.example));
                    continue;
                }
            };
            let args = NamedArgs::parse(tokens, &ARG_SPEC, errors);
            if let Some(lit) = args.get("description").and_then(|n| n.lit_str(errors)) {
                found.description = Some(lit.value().trim().to_owned());
            }
            if let Some(Value::Expr(expr)) = args.get("default").map(|n| &n.value) {
                found.default = Some(expr.clone());
            }
            found.rename = args.get("rename").and_then(|n| n.lit_str(errors));
            found.arg = Some(span);
        } else if attr.path().is_ident("schemars") {
            found.schemars.push(attr.clone());
        } else {
            if !matches!(attr.meta, Meta::Path(_)) {
                errors.at(
                    attr,
                    "`#[answer]` and `#[context]` take no arguments: write just the attribute",
                );
            }
            if attr.path().is_ident("answer") {
                found.answer = Some(span);
            } else {
                found.context = Some(span);
            }
        }
    }
    attrs.retain(|a| !is_helper(a));
    found
}

/// The text of the `///` comments: each line trimmed, lines joined with `\n`, the whole
/// trimmed. `None` when there is no (literal) doc text.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        // `#[doc = include_str!(..)]` cannot be read by a macro; such docs are skipped.
        if let Meta::NameValue(nv) = &attr.meta {
            if let Expr::Lit(lit) = &nv.value {
                if let Lit::Str(s) = &lit.lit {
                    // `split`, not `lines`: an empty `///` is a paragraph break to keep.
                    lines.extend(s.value().split('\n').map(|l| l.trim().to_owned()));
                }
            }
        }
    }
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
