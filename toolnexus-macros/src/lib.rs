//! Procedural macros for toolnexus. Depend on `toolnexus`, which re-exports them; the
//! code they generate names the runtime crate, never this one.

mod attr;
mod diag;
mod named;
mod runtime;
mod suspend;
mod tool;

use proc_macro::TokenStream;

/// Turns an `async fn` into a tool.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools sharing the value.
#[proc_macro_attribute]
pub fn toolbox(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// A suspension result.
#[proc_macro]
pub fn pending(input: TokenStream) -> TokenStream {
    suspend::pending(input.into())
        .unwrap_or_else(suspend::expression_error)
        .into()
}

/// A login suspension result.
#[proc_macro]
pub fn auth_required(input: TokenStream) -> TokenStream {
    suspend::auth_required(input.into())
        .unwrap_or_else(suspend::expression_error)
        .into()
}
