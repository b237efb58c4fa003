//! `key = value` argument lists, shared by `#[tool(...)]`, `#[arg(...)]`, `pending!` and
//! `auth_required!`: any order, trailing comma allowed, unknown and duplicate keys reported
//! at the offending key. A key may also take a nested list, `key(...)`
//! (`#[tool(approval(prompt = "...", when = ...))]`), read by its own [`Spec`].

use proc_macro2::{TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Ident, Lit, LitStr, Token, Type};

use crate::diag::Errors;

/// What a list accepts.
pub(crate) struct Spec {
    /// How the user wrote the macro, for messages: `#[tool]`, `pending!`, …
    pub(crate) context: &'static str,
    /// Keys whose value is an expression.
    pub(crate) exprs: &'static [&'static str],
    /// Keys whose value is a type.
    pub(crate) types: &'static [&'static str],
    /// Keys written alone, without a value (`#[tool(output_schema)]`).
    pub(crate) flags: &'static [&'static str],
    /// Keys that may hold a nested list, `key(...)`. A key may be in several of these sets;
    /// what follows it (nothing, `=` or parentheses) decides which form was written.
    pub(crate) lists: &'static [&'static str],
    /// A complete, valid example, shown when the input is not a `key = value` list.
    pub(crate) example: &'static str,
}

impl Spec {
    /// "one of `a`, `b`", or just "`a`" when there is one.
    fn valid_keys(&self) -> String {
        let mut keys: Vec<String> = Vec::new();
        for key in self
            .exprs
            .iter()
            .chain(self.types)
            .chain(self.flags)
            .chain(self.lists)
        {
            let key = format!("`{key}`");
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        match keys.as_slice() {
            [only] => only.clone(),
            _ => format!("one of {}", keys.join(", ")),
        }
    }
}

/// One argument's value.
pub(crate) enum Value {
    Expr(Expr),
    Type(Type),
    /// A flag key written alone.
    Flag,
    /// A nested list, `key(...)`: the parenthesized group.
    List(proc_macro2::Group),
}

/// One `key = value` pair.
pub(crate) struct Named {
    /// The key as written (raw identifiers stripped of `r#`).
    pub(crate) key: Ident,
    pub(crate) value: Value,
}

impl Named {
    /// The value as a string literal, which every attribute option is.
    pub(crate) fn lit_str(&self, errors: &mut Errors) -> Option<LitStr> {
        if let Value::Expr(Expr::Lit(lit)) = &self.value {
            if let Lit::Str(s) = &lit.lit {
                return Some(s.clone());
            }
        }
        let tokens = match &self.value {
            Value::Expr(e) => quote::quote!(#e),
            Value::Type(t) => quote::quote!(#t),
            Value::Flag => {
                let key = &self.key;
                quote::quote!(#key)
            }
            Value::List(group) => quote::quote!(#group),
        };
        errors.at(
            tokens,
            format_args!("expected a string literal: `{} = \"...\"`", self.key),
        );
        None
    }
}

/// The valid arguments of one list, in the order written.
pub(crate) struct NamedArgs {
    items: Vec<Named>,
    complete: bool,
}

impl NamedArgs {
    /// Parses `tokens`. Unknown and duplicate keys are recorded in `errors` and parsing goes
    /// on, so every mistake is reported at once; a list that is not `key = value` pairs at
    /// all is recorded too, and yields what was read before it.
    pub(crate) fn parse(tokens: TokenStream, spec: &Spec, errors: &mut Errors) -> NamedArgs {
        let mut items = Vec::new();
        let parser = |input: ParseStream| parse_list(input, spec, &mut items, errors);
        let complete = match parser.parse2(tokens) {
            Ok(()) => true,
            Err(e) => {
                errors.push(e);
                false
            }
        };
        NamedArgs { items, complete }
    }

    /// Whether the whole list was read (no syntax error cut it short).
    pub(crate) fn complete(&self) -> bool {
        self.complete
    }

    /// The argument named `key`, if given.
    pub(crate) fn get(&self, key: &str) -> Option<&Named> {
        self.items.iter().find(|n| n.key == key)
    }

    /// Every argument, in the order written.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Named> {
        self.items.iter()
    }
}

fn parse_list(
    input: ParseStream,
    spec: &Spec,
    items: &mut Vec<Named>,
    errors: &mut Errors,
) -> syn::Result<()> {
    while !input.is_empty() {
        let key = parse_key(input, spec)?;
        if let Some(named) = parse_entry(input, key, spec, errors)? {
            push_unique(items, named, spec, errors);
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

/// The next key, raw identifiers stripped of `r#`.
fn parse_key(input: ParseStream, spec: &Spec) -> syn::Result<Ident> {
    let key = input.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            format_args!("expected `key = value` arguments, e.g. `{}`", spec.example),
        )
    })?;
    Ok(key.unraw())
}

/// What follows `key`: nothing for a flag, `= value` for any other key. An unknown key is
/// reported and its value skipped (`None`), so the keys after it are still read; a list
/// that cannot be read on is an `Err`.
fn parse_entry(
    input: ParseStream,
    key: Ident,
    spec: &Spec,
    errors: &mut Errors,
) -> syn::Result<Option<Named>> {
    let name = key.to_string();
    let is = |keys: &[&str]| keys.contains(&name.as_str());
    let takes_value = is(spec.exprs) || is(spec.types) || is(spec.lists);
    if is(spec.flags) && (input.is_empty() || input.peek(Token![,])) {
        return Ok(Some(Named {
            key,
            value: Value::Flag,
        }));
    }
    if is(spec.flags) && !takes_value {
        return Err(syn::Error::new(
            key.span(),
            format_args!("`{key}` takes no value: write just `{key}`"),
        ));
    }
    if is(spec.lists) && input.peek(syn::token::Paren) {
        return match input.parse::<TokenTree>()? {
            TokenTree::Group(group) => Ok(Some(Named {
                key,
                value: Value::List(group),
            })),
            other => Err(syn::Error::new(other.span(), "expected `(...)`")),
        };
    }
    if !input.peek(Token![=]) {
        return Err(syn::Error::new(
            key.span(),
            format_args!(
                "expected `{key} = ...`; arguments of {} are `key = value` pairs, e.g. `{}`",
                spec.context, spec.example
            ),
        ));
    }
    input.parse::<Token![=]>()?;
    let value = if spec.types.contains(&name.as_str()) {
        Value::Type(input.parse()?)
    } else if spec.exprs.contains(&name.as_str()) {
        Value::Expr(input.parse()?)
    } else {
        errors.at(
            &key,
            format_args!(
                "unknown argument `{key}` in {}; expected {}",
                spec.context,
                spec.valid_keys()
            ),
        );
        skip_value(input)?;
        return Ok(None);
    };
    Ok(Some(Named { key, value }))
}

/// Adds `named` unless its key was given already, which is reported at the repeat.
fn push_unique(items: &mut Vec<Named>, named: Named, spec: &Spec, errors: &mut Errors) {
    if items.iter().any(|n| n.key == named.key) {
        errors.at(
            &named.key,
            format_args!(
                "duplicate argument `{}` in {}; give it once",
                named.key, spec.context
            ),
        );
    } else {
        items.push(named);
    }
}

/// Skips an unknown key's value up to the next top-level comma, so the keys after it are
/// still checked.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if let TokenTree::Punct(p) = &tt {
                if p.as_char() == ',' {
                    return Ok(((), rest));
                }
            }
            rest = next;
        }
        Ok(((), rest))
    })
}
