//! `Ext<T>` and `Option<Ext<T>>` parameters receive the run's values, in free fns and in
//! `#[toolbox]` methods; a missing `Ext<T>` is an error result naming the tool and the type.
#![deny(warnings)]
use std::sync::Arc;

use toolnexus::serde_json::json;
use toolnexus::{tool, toolbox, Ext, Extensions, ToolContext, Toolbox, Toolkit};

struct Tenant(&'static str);
struct Locale(&'static str);

/// Greets on behalf of the run's tenant
#[tool]
async fn greet(name: String, tenant: Ext<Tenant>, locale: Option<toolnexus::Ext<Locale>>) -> String {
    let locale = locale.map_or("en", |l| l.0);
    format!("[{}/{locale}] hello {name}", tenant.0)
}

struct Shop {
    prefix: &'static str,
}

#[toolbox]
impl Shop {
    /// Lists the tenant's orders
    #[tool]
    async fn orders(&self, tenant: ::toolnexus::Ext<Tenant>) -> String {
        format!("{}{}: none", self.prefix, tenant.0)
    }
}

pub fn main() {
    let tk = Toolkit::builder()
        .tool(Greet)
        .tools(Arc::new(Shop { prefix: "#" }).into_tools())
        .build()
        .unwrap();
    let schema = &tk.to_openai()[0]["function"]["parameters"];
    assert_eq!(schema["required"], json!(["name"]), "injected: not in the schema");
    assert_eq!(tk.to_openai()[1]["function"]["parameters"]["properties"], json!({}));

    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let acme = Extensions::new().with(Tenant("acme"));
        let ctx = || ToolContext::default().with_extensions(acme.clone());
        let out = tk.execute("greet", json!({"name": "ada"}), ctx()).await;
        assert_eq!(out.output, "[acme/en] hello ada");
        let with_locale = ToolContext::default().with_extensions(acme.clone().with(Locale("fr")));
        let out = tk.execute("greet", json!({"name": "ada"}), with_locale).await;
        assert_eq!(out.output, "[acme/fr] hello ada");
        let out = tk.execute("orders", json!({}), ctx()).await;
        assert_eq!(out.output, "#acme: none");

        let missing = tk.execute("orders", json!({}), ToolContext::default()).await;
        assert!(missing.is_error);
        let expected = format!(
            "tool `orders` needs a `{}` extension: attach it to the run with \
             `RunOptions::extension`",
            std::any::type_name::<Tenant>()
        );
        assert_eq!(missing.output, expected);
    });
}
