//! The nested runs the harness kills: the shop's three-level agent (planner > payments >
//! approvals), whose planner hands two refunds to payments in one turn, each a call of its
//! own that halts on finance's approval asked two agents down. Finance approves one and
//! declines the other. A resume runs the approved refund in its approvals agent's run,
//! then that run's reply, payments' and the planner's, all journaled in the planner's
//! journal; the declined call ends as declined, its refund never run.

#[path = "../../../examples/shop_agent/nested.rs"]
mod agent;

use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{LlmClient, Request, Toolkit};

use crate::shop::Ledger;
use crate::worker::hook;

/// The prompt every nested run starts from.
pub const PROMPT: &str = "Refund orders A-7 and B-2";

/// The orders the approvals agent refunds in one turn, and whether finance approves each.
pub const ORDERS: [(&str, bool); 2] = [("A-7", true), ("B-2", false)];

/// The call id of the refund of `order`.
pub fn call_of(order: &str) -> String {
    agent::refund_call(order)
}

/// Whether finance approves `request`: the refund of the order its prompt names.
pub fn approves(request: &Request) -> bool {
    let relay = request.relay().expect("a relayed request");
    assert_eq!(relay.agents(), ["payments", "approvals"], "{request:?}");
    ORDERS
        .iter()
        .find(|(order, _)| relay.prompt == format!("Refund order {order}?"))
        .map(|(_, ok)| *ok)
        .unwrap_or_else(|| panic!("no order of ours: {request:?}"))
}

/// The model turns of the three runs: 0 for each first one (they halted before the
/// answers), then the resume's in the order it asks them: approvals with the refunds'
/// results, payments with approvals' reply, the planner with payments'.
pub const TURNS: usize = 4;

pub fn turn_of(req: &RecordedRequest) -> usize {
    if req.tool_results().is_empty() {
        return 0;
    }
    match agent::level(req) {
        agent::Level::Approvals => 1,
        agent::Level::Payments => 2,
        agent::Level::Planner => 3,
    }
}

/// The three agents' scripted model.
pub fn script(req: &RecordedRequest) -> Reply {
    agent::script(req)
}

/// The planner's toolkit, its agents on `client`, whose `refund` writes its effect to
/// `ledger` between two kill points.
pub fn toolkit(ledger: &Ledger, client: &LlmClient) -> Toolkit {
    let ledger = ledger.clone();
    let refund = agent::refund(move |order, ctx| {
        hook(&format!("refund {order} begins"));
        ledger.write(ctx);
        hook(&format!("refund {order} took effect"));
        format!("refunded {order}")
    });
    agent::planner_toolkit(client, refund)
}
