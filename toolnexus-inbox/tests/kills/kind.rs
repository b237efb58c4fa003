//! The kinds of run the harness kills: the shop's (three purchases in one run, two
//! approved) and the nested one (the three-level agent's two refunds, asked two agents
//! down, one approved). Each engine runs a session of each.

use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{LlmClient, Request, Toolkit};

use crate::nested;
use crate::shop::{self, Ledger};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Shop,
    Nested,
}

impl Kind {
    pub const ALL: [Kind; 2] = [Kind::Shop, Kind::Nested];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Shop => "shop",
            Kind::Nested => "nested",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The prompt every run of the kind starts from.
    pub fn prompt(self) -> &'static str {
        match self {
            Kind::Shop => shop::PROMPT,
            Kind::Nested => nested::PROMPT,
        }
    }

    /// The scripted model's answer to `req`.
    pub fn script(self) -> fn(&RecordedRequest) -> Reply {
        match self {
            Kind::Shop => shop::script,
            Kind::Nested => nested::script,
        }
    }

    /// The toolkit of the runs, their effects written to `ledger`; the nested agents run
    /// on `client`.
    pub fn toolkit(self, ledger: &Ledger, client: &LlmClient) -> Toolkit {
        match self {
            Kind::Shop => shop::toolkit(ledger),
            Kind::Nested => nested::toolkit(ledger, client),
        }
    }

    /// How many requests a run halts on.
    pub fn requests(self) -> usize {
        match self {
            Kind::Shop => shop::ITEMS.len(),
            Kind::Nested => nested::ORDERS.len(),
        }
    }

    /// Whether the person approves `request`, the `n`th the run halted on.
    pub fn approves(self, n: usize, request: &Request) -> bool {
        match self {
            Kind::Shop => shop::ITEMS[n].1,
            Kind::Nested => nested::approves(request),
        }
    }

    /// The calls whose effect must happen exactly once, and those whose must never.
    pub fn effects(self) -> (Vec<String>, Vec<String>) {
        match self {
            Kind::Shop => {
                let of = |ok: bool| {
                    shop::ITEMS
                        .iter()
                        .filter(move |(_, approved)| *approved == ok)
                        .map(|(item, _)| shop::call_of(item))
                };
                let approved = of(true).chain([shop::NOTICE.to_owned()]).collect();
                (approved, of(false).collect())
            }
            Kind::Nested => {
                let of = |ok: bool| {
                    nested::ORDERS
                        .iter()
                        .filter(move |(_, approved)| *approved == ok)
                        .map(|(order, _)| nested::call_of(order))
                        .collect()
                };
                (of(true), of(false))
            }
        }
    }

    /// How many model turns there are, the halted ones (turn 0) included.
    pub fn turns(self) -> usize {
        match self {
            Kind::Shop => shop::TURNS,
            Kind::Nested => nested::TURNS,
        }
    }

    /// Which turn a request to the model is; a resume asks them in order.
    pub fn turn_of(self, req: &RecordedRequest) -> usize {
        match self {
            Kind::Shop => shop::turn_of(req),
            Kind::Nested => nested::turn_of(req),
        }
    }
}
