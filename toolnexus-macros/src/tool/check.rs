//! The checks of a read `#[tool]` fn: everything that was read but is not allowed — the
//! signature's shape, the name and description, `self`, and each parameter against its
//! role — each reported at the token that causes it. Kept apart from reading, so the
//! model stays a plain description of what was written.

use syn::{GenericParam, Signature, Type};

use syn::ext::IdentExt;

use super::parse::{
    find_impl_trait, owned_answer, rename_self, strip_group, Owner, Param, Role, ToolFn,
};
use crate::attr::EditsOption;
use crate::diag::Errors;

/// The longest tool name providers accept.
const MAX_NAME_CHARS: usize = 64;

/// Runs every check of `model`, read from `sig`.
pub(crate) fn tool(model: &ToolFn, sig: &Signature, errors: &mut Errors) {
    signature(sig, errors);
    name(model, errors);
    description(model, errors);
    receiver(model, errors);
    params(model, errors);
    wire_names(model, errors);
    output_schema(model, errors);
    approval(model, errors);
}

fn signature(sig: &Signature, errors: &mut Errors) {
    // A plain `fn` is fine: its body runs as is, inside the tool's future.
    if let Some(unsafety) = &sig.unsafety {
        errors.at(
            unsafety,
            "a #[tool] fn cannot be `unsafe`: the model calls it with arbitrary arguments",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(abi, "a #[tool] fn cannot have an `extern` ABI");
    }
    // Lifetime parameters are fine (`Option<&'a Answer>`): the call infers them.
    let generic = sig
        .generics
        .params
        .iter()
        .find(|p| !matches!(p, GenericParam::Lifetime(_)));
    if let Some(param) = generic {
        errors.at(
            param,
            "a #[tool] fn cannot be generic: its parameters are decoded from the model's JSON \
             at run time, so their types must be concrete",
        );
    } else if let Some(clause) = &sig.generics.where_clause {
        errors.at(clause, "a #[tool] fn cannot have a `where` clause");
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, "a #[tool] fn cannot be variadic");
    }
}

fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Why `name` is too long to be a tool's name, if it is.
fn name_too_long(name: &str) -> Option<String> {
    let chars = name.chars().count();
    (chars > MAX_NAME_CHARS).then(|| {
        format!(
            "a tool name may have at most {MAX_NAME_CHARS} characters (providers refuse longer \
             ones); this one has {chars}: set a shorter `#[tool(name = \"...\")]`"
        )
    })
}

fn name(model: &ToolFn, errors: &mut Errors) {
    let name = &model.name;
    match &model.name_lit {
        Some(lit) if !is_valid_name(name) => errors.at(
            lit,
            "a tool name must be non-empty and use only `a-z`, `A-Z`, `0-9`, `_` and `-` \
             (what every provider accepts), e.g. `name = \"get_weather\"`",
        ),
        None if !is_valid_name(name) => errors.at(
            &model.fn_ident,
            "a tool name may only use `a-z`, `A-Z`, `0-9`, `_` and `-`: rename the fn or \
             set `#[tool(name = \"...\")]`",
        ),
        Some(lit) => {
            if let Some(message) = name_too_long(name) {
                errors.at(lit, message);
            }
        }
        None => {
            if let Some(message) = name_too_long(name) {
                errors.at(&model.fn_ident, message);
            }
        }
    }
}

/// The description is how the model decides when to call the tool: it must not be empty.
fn description(model: &ToolFn, errors: &mut Errors) {
    if !model.description.is_empty() {
        return;
    }
    match &model.description_lit {
        Some(lit) => errors.at(lit, "the description is empty: say what the tool does"),
        None => errors.at(
            &model.fn_ident,
            format_args!(
                "the tool `{}` has no description, and the model needs one to know when to \
                 call it: add a `/// doc comment` to the fn, or `#[tool(description = \"...\")]`",
                model.name
            ),
        ),
    }
}

/// Only `&self` makes sense for tools that share one value and may run at the same time.
fn receiver(model: &ToolFn, errors: &mut Errors) {
    let Some(receiver) = &model.receiver else {
        return;
    };
    let Owner::Toolbox { takes_self, .. } = &model.owner else {
        errors.at(
            receiver,
            "a free #[tool] fn has no `self`: to make tools of methods sharing one value, \
             put `#[toolbox]` on the impl block",
        );
        return;
    };
    if *takes_self {
        return;
    }
    match strip_group(&receiver.ty) {
        Type::Reference(r) if r.mutability.is_some() => errors.at(
            receiver,
            "a tool method takes `&self`, not `&mut self`: the tools of a toolbox share one \
             value and may run at the same time; keep changing state behind interior \
             mutability (`Mutex`, `RwLock`, atomics)",
        ),
        _ => errors.at(
            receiver,
            "a tool method takes `&self`: its toolbox lives in an `Arc` shared by all of its \
             tools, so a call can borrow the value but never own it",
        ),
    }
}

fn params(model: &ToolFn, errors: &mut Errors) {
    for param in &model.params {
        let attrs = &param.attrs;
        if let (Some(_), Some(context)) = (attrs.answer, attrs.context) {
            errors.at_span(
                context,
                "a parameter is either `#[answer]` or `#[context]`, not both",
            );
            continue;
        }
        let is_arg = matches!(param.role, Role::Arg { .. });
        if let (Some(arg), false) = (attrs.arg, is_arg) {
            errors.at_span(
                arg,
                "`#[arg]` describes a schema property, but this parameter is injected by the \
                 runtime and is not in the schema: remove `#[arg(...)]`",
            );
        }
        if let (Some(attr), false) = (attrs.schemars.first(), is_arg) {
            errors.at(
                attr,
                "`#[schemars(...)]` shapes a schema property, but this parameter is injected by \
                 the runtime and is not in the schema: remove it",
            );
        }
        if let Some(lit) = &attrs.rename {
            if !is_valid_property(&lit.value()) {
                errors.at(
                    lit,
                    "a property name must be 1 to 64 characters of `a-z`, `A-Z`, `0-9`, `_`, \
                     `.` and `-` (what every provider accepts), e.g. `rename = \"cityName\"`",
                );
            }
        }
        if matches!(param.role, Role::Arg { .. }) {
            decoded(param, &model.krate, errors);
        }
    }
}

fn is_valid_property(name: &str) -> bool {
    (1..=MAX_NAME_CHARS).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Two parameters with one wire name would make one of them unreachable.
fn wire_names(model: &ToolFn, errors: &mut Errors) {
    let mut seen: Vec<&str> = Vec::new();
    for param in &model.params {
        let Role::Arg { name, .. } = &param.role else {
            continue;
        };
        if seen.contains(&name.as_str()) {
            let at = match &param.attrs.rename {
                Some(lit) => lit.span(),
                None => param.ident.span(),
            };
            errors.at_span(
                at,
                format_args!(
                    "two parameters are named `{name}` in the input schema: give one another \
                     name with `#[arg(rename = \"...\")]`"
                ),
            );
        } else {
            seen.push(name);
        }
    }
}

/// `output_schema` declares the schema of a value, so there must be one.
fn output_schema(model: &ToolFn, errors: &mut Errors) {
    let Some(flag) = model.output_schema else {
        return;
    };
    if super::parse::output_value(&model.output).is_none() {
        errors.at_span(
            flag,
            "`output_schema` declares the schema of the value a tool returns, and this tool \
             returns text or a `ToolResult`: return a typed value (`T`, `Json<T>` or \
             `Result<T, E>`), or remove `output_schema`",
        );
    }
}

/// An approval is decided before the call runs, so its prompt shows, and its condition
/// reads, only what is known then: the arguments (and a toolbox's shared value).
fn approval(model: &ToolFn, errors: &mut Errors) {
    let Some(approval) = &model.approval else {
        return;
    };
    if let Some(template) = &approval.prompt {
        let shown: Vec<String> = model
            .params
            .iter()
            .filter(|p| matches!(p.role, Role::Arg { .. }))
            .map(|p| p.ident.unraw().to_string())
            .collect();
        for name in template.names.iter().filter(|n| !shown.contains(n)) {
            errors.at(&template.lit, unknown_placeholder(model, name, &shown));
        }
    }
    if let Some(EditsOption::Only(fields)) = &approval.edits {
        let wire: Vec<&str> = model
            .params
            .iter()
            .filter_map(|p| match &p.role {
                Role::Arg { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        for field in fields {
            let name = field.value();
            if !wire.contains(&name.as_str()) {
                errors.at(
                    field,
                    format_args!(
                        "`{name}` is not an argument of this tool, so no edit could change it; \
                         `edits` names arguments as the model sends them: {}",
                        if wire.is_empty() {
                            "this tool takes none".to_owned()
                        } else {
                            wire.iter()
                                .map(|w| format!("`{w}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                );
            }
        }
    }
    let Some(when) = &approval.when else {
        return;
    };
    let (_, Some(self_at)) = rename_self(quote::ToTokens::to_token_stream(when), "self") else {
        return;
    };
    match &model.owner {
        Owner::Toolbox {
            takes_self: true, ..
        } => {}
        Owner::Toolbox { .. } => errors.at_span(
            self_at,
            "this method takes no `&self`, so `when` cannot read it: take `&self`, or decide \
             from the parameters",
        ),
        Owner::Free => errors.at_span(
            self_at,
            "a free #[tool] fn has no `self` for `when` to read: decide from the parameters",
        ),
    }
}

/// Why `{name}` cannot be shown, and what can be.
fn unknown_placeholder(model: &ToolFn, name: &str, shown: &[String]) -> String {
    let param = model.params.iter().find(|p| p.ident.unraw() == name);
    let wire = model.params.iter().find_map(|p| match &p.role {
        Role::Arg { name: wire, .. } if wire == name => Some(p.ident.unraw()),
        _ => None,
    });
    let why = match (param, wire) {
        (Some(_), _) => format!(
            "`{name}` is filled in by the runtime when the tool runs, after it is approved, so \
             the prompt cannot show it"
        ),
        (None, Some(ident)) => {
            return format!(
                "`{name}` is the name of `{ident}` on the wire; the prompt names parameters as \
                 the fn does: `{{{ident}}}`"
            )
        }
        (None, None) => format!("`{{{name}}}` is not a parameter of this tool"),
    };
    let can = match shown {
        [] => "this tool has no arguments for a prompt to show".to_owned(),
        _ => {
            let names: Vec<String> = shown.iter().map(|n| format!("`{{{n}}}`")).collect();
            format!("the prompt can show {}", names.join(", "))
        }
    };
    format!("{why}; {can}")
}

/// A schema property's type: decoded from JSON, so owned and concrete.
fn decoded(param: &Param, krate: &syn::Path, errors: &mut Errors) {
    let ty = &param.ty;
    let ident = &param.ident;
    if let Some(impl_trait) = find_impl_trait(ty) {
        errors.at_span(
            impl_trait,
            "a #[tool] parameter cannot be `impl Trait`: its value is decoded from JSON, so \
             name a concrete type",
        );
    } else if let Some(answer) = owned_answer(ty, krate) {
        errors.at(
            answer,
            "the runtime lends the answer, it does not give it away: write `Option<&Answer>` \
             (or `Option<Answered<T>>` for its data decoded)",
        );
    } else if let Some(lent) = lent_answer(ty) {
        // The shape of the injected answer under a name `#[tool]` cannot tell is the
        // runtime's (`use toolnexus::Answer as Approval`): without this, the parameter
        // would be taken for a schema property and fail in the generated code.
        let lent = quote::ToTokens::to_token_stream(lent).to_string();
        let ty_text = quote::ToTokens::to_token_stream(ty).to_string();
        errors.at(
            ty,
            format_args!(
                "`{lent}` is not spelled `Answer`, so `#[tool]` takes `{ident}` for an argument \
                 the model sends, and arguments cannot be borrowed. If `{lent}` is the \
                 runtime's `Answer` under another name, mark the parameter: \
                 `#[answer] {ident}: {ty_text}`",
                lent = tidy(&lent),
                ty_text = tidy(&ty_text),
            ),
        );
    } else if let Type::Reference(reference) = strip_group(ty) {
        let ty_text = quote::ToTokens::to_token_stream(ty).to_string();
        let owned = "a #[tool] parameter is decoded from JSON and must be owned (e.g. `String`, \
                     not `&str`); only `&ToolContext` and `Option<&Answer>` are lent by the \
                     runtime";
        if named_type(&reference.elem) {
            errors.at(
                reference.and_token,
                format_args!(
                    "{owned}: if this is the context under another name, mark the parameter: \
                     `#[context] {ident}: {ty_text}`",
                    ty_text = tidy(&ty_text),
                ),
            );
        } else {
            errors.at(reference.and_token, owned);
        }
    } else if let Some(reference) = find_reference(ty) {
        errors.at(
            reference,
            "a #[tool] parameter is decoded from JSON and must own its data: write an owned \
             type here (e.g. `String`, not `&str`)",
        );
    }
}

/// A type named like a struct (`Approval`, `my::Ctx`), which may be an alias of one of the
/// runtime's; not `str`, `String`, a slice or a primitive.
fn named_type(ty: &Type) -> bool {
    let Type::Path(p) = strip_group(ty) else {
        return false;
    };
    p.path.segments.last().is_some_and(|last| {
        let name = last.ident.to_string();
        name != "String" && name.chars().next().is_some_and(char::is_uppercase)
    })
}

/// `X` of an `Option<&X>` (any spelling of `Option`), `X` named like a struct: the
/// injected answer's shape.
fn lent_answer(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = strip_group(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(inner) => match strip_group(inner) {
            Type::Reference(r) if r.mutability.is_none() && named_type(&r.elem) => Some(&r.elem),
            _ => None,
        },
        _ => None,
    }
}

/// The first reference nested inside a type (`Vec<&str>`), which cannot be decoded.
fn find_reference(ty: &Type) -> Option<&syn::TypeReference> {
    match strip_group(ty) {
        Type::Reference(r) => Some(r),
        Type::Slice(s) => find_reference(&s.elem),
        Type::Array(a) => find_reference(&a.elem),
        Type::Tuple(t) => t.elems.iter().find_map(find_reference),
        Type::Path(p) => p.path.segments.iter().find_map(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
                syn::GenericArgument::Type(t) => find_reference(t),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// Tokens as a person writes them: `Option < & Approval >` → `Option<&Approval>`.
fn tidy(tokens: &str) -> String {
    let mut out = String::with_capacity(tokens.len());
    let mut chars = tokens.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ' ' {
            out.push(c);
            continue;
        }
        let before = out.chars().last();
        let after = chars.peek().copied();
        // A space stays only between two words (`dyn Trait`, `'a T`) and after a comma.
        let keep = matches!(before, Some(b) if b.is_alphanumeric() || b == '_' || b == ',')
            && matches!(after, Some(a) if a.is_alphanumeric() || a == '_' || a == '\'');
        if keep {
            out.push(' ');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn types_are_written_back_as_a_person_writes_them() {
        let written = |ty: syn::Type| tidy(&quote::ToTokens::to_token_stream(&ty).to_string());
        assert_eq!(
            written(syn::parse_quote!(Option<&Approval>)),
            "Option<&Approval>"
        );
        assert_eq!(
            written(syn::parse_quote!(Option<&'a my::Approval>)),
            "Option<&'a my::Approval>"
        );
        assert_eq!(
            written(syn::parse_quote!(HashMap<String, u8>)),
            "HashMap<String, u8>"
        );
        assert_eq!(written(syn::parse_quote!(&dyn Trait)), "&dyn Trait");
    }
}
