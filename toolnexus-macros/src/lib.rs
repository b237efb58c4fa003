//! Procedural macros for toolnexus. Use them through the `toolnexus` crate.
use proc_macro::TokenStream;

/// Turns an `async fn` into a tool.
#[proc_macro_attribute]
pub fn tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Turns the `#[tool]` methods of an impl block into tools sharing the value.
#[proc_macro_attribute]
pub fn toolbox(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// A suspension result.
#[proc_macro]
pub fn pending(_input: TokenStream) -> TokenStream {
    "::core::compile_error!(\"not yet\")".parse().unwrap()
}

/// A login suspension result.
#[proc_macro]
pub fn auth_required(_input: TokenStream) -> TokenStream {
    "::core::compile_error!(\"not yet\")".parse().unwrap()
}
