//! What the harness and its workers share: the prompt a run starts from, the scripted
//! model's turns, the shop's toolkit, and the order book each purchase writes to the moment
//! it happens, outside the process that may be killed right after.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{Approval, NativeTool, ToolContext, ToolResult, Toolkit};

use crate::worker::hook;

/// The prompt of run `workflow` buying `items` (bare names such as `gpu`).
pub fn prompt(workflow: &str, items: &[String]) -> String {
    format!("{workflow}: buy {}", items.join(" and "))
}

/// The run a prompt is for, and the items it buys, each named after its run so that no two
/// runs of a session buy the same thing.
pub fn parse_prompt(prompt: &str) -> Option<(String, Vec<String>)> {
    let (workflow, rest) = prompt.split_once(": buy ")?;
    let items = rest
        .split(" and ")
        .map(|item| item_of(workflow, item))
        .collect();
    Some((workflow.to_owned(), items))
}

/// The item run `workflow` buys for the bare name `name`.
pub fn item_of(workflow: &str, name: &str) -> String {
    format!("{workflow}.{name}")
}

/// The call id the model gives the purchase of `item`.
pub fn call_of(item: &str) -> String {
    format!("call_{item}")
}

/// Which of a run's model turns a request is: 0 asks what to buy, 1 reports the results.
pub fn turn_of(req: &RecordedRequest) -> usize {
    usize::from(!req.tool_results().is_empty())
}

/// The run a request to the model belongs to.
pub fn run_of(req: &RecordedRequest) -> Option<String> {
    let prompts = req.prompts();
    parse_prompt(prompts.first()?).map(|(workflow, _)| workflow)
}

/// What the model says of one purchase's result.
pub fn said_of(call: &str, result: &str) -> String {
    match result.strip_prefix(ORDERED) {
        Some(order) => format!("{call}: bought as {order}"),
        None => format!("{call}: not bought"),
    }
}

/// The scripted model: one purchase per item of the prompt in one turn, then what came of
/// each.
pub fn script(req: &RecordedRequest) -> Reply {
    let results = req.tool_results();
    if !results.is_empty() {
        let said: Vec<String> = results
            .iter()
            .map(|(call, out)| said_of(call, out))
            .collect();
        return Reply::text(said.join("; "));
    }
    let prompts = req.prompts();
    let Some((_, items)) = prompts.first().and_then(|p| parse_prompt(p)) else {
        return Reply::error(400, "the harness's prompt names no run");
    };
    Reply::tool_calls(
        items
            .iter()
            .map(|item| (call_of(item), "purchase", json!({ "item": item }))),
    )
}

/// How a purchase's result begins: the order's id follows.
const ORDERED: &str = "ordered ";

/// The shop's orders, one file per idempotency key in a directory the harness reads back,
/// and a log line per time a purchase ran, whether or not it placed an order.
#[derive(Clone, Debug)]
pub struct Book {
    dir: PathBuf,
}

impl Book {
    pub fn new(dir: impl Into<PathBuf>) -> Book {
        Book { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn orders(&self) -> PathBuf {
        self.dir.join("orders")
    }

    fn log(&self) -> PathBuf {
        self.dir.join("purchases.log")
    }

    /// Creates the book's directories.
    pub fn create(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(self.orders())
    }

    /// Buys `item` under `key`: the order placed under the key before, or a new one. The
    /// order file appears whole or not at all (written aside, then linked into place, which
    /// fails when another run of the same key got there first), so a kill at any instant
    /// leaves at most one order per key.
    fn buy(&self, item: &str, key: &str) -> std::io::Result<String> {
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log())?;
        log.write_all(format!("{item}\t{key}\n").as_bytes())?;
        let order = self.orders().join(key);
        if order.exists() {
            return Ok(key.to_owned());
        }
        let aside = self.orders().join(format!(".{key}.{}", std::process::id()));
        std::fs::write(&aside, item)?;
        let placed = std::fs::hard_link(&aside, &order);
        std::fs::remove_file(&aside)?;
        match placed {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(key.to_owned()),
        }
    }

    /// Every order placed, by item: the order ids (their keys).
    pub fn placed(&self) -> BTreeMap<String, Vec<String>> {
        let mut placed: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let entries = std::fs::read_dir(self.orders()).expect("the order book reads");
        for entry in entries {
            let entry = entry.expect("an order's entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let item = std::fs::read_to_string(entry.path()).expect("an order reads");
            placed.entry(item).or_default().push(name);
        }
        placed
    }

    /// How many times each item's purchase ran.
    pub fn ran(&self) -> BTreeMap<String, usize> {
        let text = std::fs::read_to_string(self.log()).unwrap_or_default();
        let mut ran: BTreeMap<String, usize> = BTreeMap::new();
        // A line without its tab is another run's, being written now.
        for (item, _key) in text.lines().filter_map(|l| l.split_once('\t')) {
            *ran.entry(item.to_owned()).or_default() += 1;
        }
        ran
    }
}

/// The kill point inside the purchase of `item` before its effect.
pub fn before_effect(item: &str) -> String {
    format!("purchase {item} begins")
}

/// The kill point inside the purchase of `item` after its effect, before it returns.
pub fn after_effect(item: &str) -> String {
    format!("purchase {item} took effect")
}

/// `purchase(item)` behind a declared approval, placing its order in `book` between two
/// kill points.
pub fn toolkit(book: &Book) -> Toolkit {
    let book = book.clone();
    let purchase = NativeTool::of(
        "purchase",
        "Buys an item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        move |args: serde_json::Value, ctx: ToolContext| {
            let book = book.clone();
            async move {
                let Some(item) = args["item"].as_str() else {
                    return ToolResult::error("name the item to buy");
                };
                let Some(key) = ctx.idempotency_key() else {
                    return ToolResult::error("a purchase needs the run's idempotency key");
                };
                hook(&before_effect(item));
                let order = match book.buy(item, &key) {
                    Ok(order) => order,
                    Err(e) => return ToolResult::error(format!("the order book failed: {e}")),
                };
                hook(&after_effect(item));
                ToolResult::ok(format!("{ORDERED}{order}"))
            }
        },
    );
    Toolkit::builder()
        .tool(purchase)
        .approval(Approval::tools(["purchase"]))
        .build()
        .expect("one tool")
}
