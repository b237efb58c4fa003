//! The forms a `#[toolbox]` accepts: receivers with lifetimes or an explicit type, the
//! attribute by path, public methods of a private type, an associated fn, a box declared
//! inside a fn body.
#![deny(warnings)]
// The form under test, which clippy would have written otherwise.
#![allow(clippy::needless_arbitrary_self_type)]
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use toolnexus::{toolbox, Answer, Tool, ToolContext, Toolbox};

struct Counter {
    n: AtomicU32,
}

#[toolbox(crate = "::toolnexus")]
impl Counter {
    /// Adds one
    #[toolnexus::tool]
    pub async fn bump<'a>(&'a self, answer: Option<&'a Answer>) -> String {
        let by = if answer.is_some() { 2 } else { 1 };
        (self.n.fetch_add(by, Ordering::SeqCst) + by).to_string()
    }

    /// Reads the count
    #[tool(name = "read")]
    async fn get(self: &Self, ctx: &ToolContext) -> String {
        format!("{} {:?}", self.n.load(Ordering::SeqCst), ctx.call_id)
    }

    /// Says what it counts
    #[tool]
    pub(crate) async fn unit() -> &'static str {
        "clicks"
    }

    const START: u32 = 0;

    fn new() -> Self {
        Counter {
            n: AtomicU32::new(Self::START),
        }
    }
}

pub fn main() {
    struct Local;

    #[toolbox]
    impl Local {
        /// Pings
        #[tool]
        async fn ping(&self) -> &'static str {
            "pong"
        }
    }

    let tools = Arc::new(Counter::new()).into_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["bump", "read", "unit"]);
    let one: CounterBump = CounterBump::new(Arc::new(Counter::new()));
    let _: Vec<Box<dyn Tool>> = vec![Box::new(one.clone()), Box::new(CounterGet::new(Arc::new(Counter::new())))];
    assert_eq!(Arc::new(Local).into_tools()[0].name(), "ping");
    let _ = ToolContext::default();
}
