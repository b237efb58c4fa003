//! `#[toolbox]`: methods of one value become tools that share it, with every rule of a free
//! `#[tool]` fn, and a full agent run over them.

use crate::common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    pending, toolbox, Answer, Answered, Request, RunStatus, Style, Tool, ToolContext, ToolResult,
    Toolbox, Toolkit,
};

/// A shop whose tools share one stock table.
struct Shop {
    stock: Mutex<HashMap<String, u32>>,
    /// Every execution of every tool of the shop.
    runs: AtomicUsize,
}

impl Shop {
    fn with(items: &[(&str, u32)]) -> Arc<Shop> {
        let stock = items.iter().map(|(s, n)| ((*s).to_owned(), *n)).collect();
        Arc::new(Shop {
            stock: Mutex::new(stock),
            runs: AtomicUsize::new(0),
        })
    }

    fn left(&self, sku: &str) -> u32 {
        self.stock
            .lock()
            .unwrap()
            .get(sku)
            .copied()
            .unwrap_or_default()
    }
}

#[toolbox]
impl Shop {
    /// How many of an item are in stock
    #[tool]
    async fn stock(&self, sku: String) -> ToolResult {
        self.runs.fetch_add(1, Ordering::SeqCst);
        ToolResult::ok(format!("{} of {sku} in stock", self.left(&sku)))
    }

    /// Reserves items; asks a human above 10
    #[tool]
    async fn reserve(&self, sku: String, qty: u32, answer: Option<&Answer>) -> ToolResult {
        self.runs.fetch_add(1, Ordering::SeqCst);
        if qty > 10 {
            match answer {
                None => {
                    return pending!(
                        kind = "approval",
                        prompt = format!("Reserve {qty} of {sku}?")
                    )
                }
                Some(a) if !a.ok => return ToolResult::error("not approved"),
                Some(_) => {}
            }
        }
        self.take(&sku, qty)
    }

    /// Puts items back on the shelf
    #[tool(name = "restock", struct_name = "Restock")]
    pub async fn put_back(
        &self,
        #[arg(description = "The item's stock-keeping unit")] sku: String,
        qty: u32,
    ) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        *self.stock.lock().unwrap().entry(sku.clone()).or_default() += qty;
        format!("{} of {sku} in stock", self.left(&sku))
    }

    // Not a tool: stays an ordinary method, callable by the tools and by anyone.
    fn take(&self, sku: &str, qty: u32) -> ToolResult {
        let mut stock = self.stock.lock().unwrap();
        let have = stock.entry(sku.to_owned()).or_default();
        if *have < qty {
            return ToolResult::error(format!("only {have} of {sku} left"));
        }
        *have -= qty;
        ToolResult::ok(format!("reserved {qty} of {sku}, {have} left"))
    }
}

fn toolkit(shop: &Arc<Shop>) -> Toolkit {
    Toolkit::builder()
        .tools(shop.clone().into_tools())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_toolbox_run_shares_state_and_resumes_a_reservation() {
    let shop = Shop::with(&[("a", 20)]);
    let tk = toolkit(&shop);
    let mock = MockLlm::start([
        Reply::tool_call("c1", "stock", json!({"sku": "a"})),
        Reply::tool_call("c2", "reserve", json!({"sku": "a", "qty": 12})),
        Reply::tool_call("c3", "restock", json!({"sku": "a", "qty": 2})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let asked = Arc::new(Mutex::new(Vec::<Request>::new()));
    let seen = asked.clone();
    let client = common::on(&mock, Style::OpenAi)
        .wait_for(move |req: Request| {
            seen.lock().unwrap().push(req.clone());
            async move { Answer::ok(req.id) }
        })
        .build()
        .unwrap();

    let result = client.run("reserve 12 of a", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "done");
    let outputs: Vec<(&str, &str)> = result
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.output.as_str()))
        .collect();
    assert_eq!(
        outputs,
        [
            ("stock", "20 of a in stock"),
            ("reserve", "reserved 12 of a, 8 left"),
            ("restock", "10 of a in stock"),
        ],
        "each tool sees what the previous one changed"
    );
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "only the reservation above 10 asks");
    assert_eq!(asked[0].prompt, "Reserve 12 of a?");
    assert_eq!(
        shop.runs.load(Ordering::SeqCst),
        4,
        "the suspended reservation ran twice"
    );
    assert_eq!(shop.left("a"), 10, "the caller's Arc sees the same value");

    let declared = &mock.requests()[0].body["tools"];
    let names: Vec<&str> = declared
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["stock", "reserve", "restock"],
        "in the order written"
    );
}

#[test]
fn methods_follow_the_rules_of_tool_fns() {
    let tools = Shop::with(&[]).into_tools();
    let reserve = &tools[1];
    assert_eq!(reserve.name(), "reserve");
    assert_eq!(
        reserve.description(),
        "Reserves items; asks a human above 10"
    );
    assert_eq!(
        reserve.input_schema()["required"],
        json!(["sku", "qty"]),
        "`self` and the injected answer are not arguments"
    );
    let restock = &tools[2];
    assert_eq!(restock.name(), "restock");
    assert_eq!(
        restock.input_schema()["properties"]["sku"]["description"],
        "The item's stock-keeping unit"
    );
}

#[tokio::test]
async fn bad_arguments_never_reach_a_method() {
    let shop = Shop::with(&[("a", 5)]);
    let tk = toolkit(&shop);
    let result = tk
        .execute(
            "reserve",
            json!({"sku": "a", "qty": -1}),
            ToolContext::default(),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result
            .output
            .starts_with("invalid arguments for reserve: `qty`: "),
        "{}",
        result.output
    );
    let result = tk.execute("stock", json!({}), ToolContext::default()).await;
    assert_eq!(
        result.output,
        "invalid arguments for stock: missing required argument `sku`"
    );
    assert_eq!(shop.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn one_tool_alone_and_the_methods_as_written() {
    let shop = Shop::with(&[("a", 3)]);
    // The generated structs are named after the type and the method (or `struct_name`).
    let tk = Toolkit::builder()
        .tool(ShopStock::new(shop.clone()))
        .tool(Restock::new(shop.clone()))
        .build()
        .unwrap();
    assert_eq!(tk.tools().len(), 2);
    let out = tk
        .execute(
            "restock",
            json!({"sku": "a", "qty": 1}),
            ToolContext::default(),
        )
        .await;
    assert_eq!(out.output, "4 of a in stock");

    assert_eq!(shop.stock("a".into()).await.output, "4 of a in stock");
    assert_eq!(
        shop.take("a", 5),
        ToolResult::error("only 4 of a left"),
        "a method without #[tool] is untouched"
    );
    assert!(format!("{:?}", ShopStock::new(shop)).starts_with("ShopStock"));
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Note {
    text: String,
}

/// A value whose tools use the other injections, a panic, and an associated fn.
struct Desk {
    name: String,
}

#[toolbox]
impl Desk {
    /// Writes a note once a human typed it
    #[tool]
    async fn note(&self, ctx: &ToolContext, note: Option<Answered<Note>>) -> ToolResult {
        match note {
            None => pending!(kind = "input", prompt = "Note?", answer = Note),
            Some(n) => ToolResult::ok(format!(
                "{} noted {:?} in call {:?}",
                self.name,
                n.text,
                ctx.call_id.as_deref()
            )),
        }
    }

    /// Always fails loudly
    #[tool]
    async fn explode(&self) -> String {
        panic!("{} blew up", self.name)
    }

    /// Tells the time (a tool of the box that needs no value)
    #[tool(description = "Says what time it is")]
    async fn clock() -> &'static str {
        "noon"
    }
}

#[tokio::test]
async fn injections_panics_and_associated_fns_in_a_toolbox() {
    let tools = Arc::new(Desk { name: "ada".into() }).into_tools();
    let [note, explode, clock] = &tools[..] else {
        panic!("three tools, got {}", tools.len());
    };

    let parked = note.execute(json!({}), ToolContext::default()).await;
    let request = ToolResult::pending_of(&parked).expect("suspended");
    assert_eq!(request.data.unwrap()["schema"]["required"], json!(["text"]));
    let ctx = ToolContext::default()
        .with_call_id("c9")
        .with_answer(Answer::ok(&request.id).with_data(json!({"text": "hi"})));
    assert_eq!(
        note.execute(json!({}), ctx).await.output,
        "ada noted \"hi\" in call Some(\"c9\")"
    );

    let boom = explode.execute(json!({}), ToolContext::default()).await;
    assert!(boom.is_error);
    assert_eq!(boom.output, "tool explode failed: panicked: ada blew up");

    assert_eq!(clock.description(), "Says what time it is");
    assert_eq!(
        clock
            .execute(json!(null), ToolContext::default())
            .await
            .output,
        "noon"
    );
}
