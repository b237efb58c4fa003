//! A run's plan, drawn from the seed: the items it buys, whether each is approved, and the
//! points its workers are killed at.

use super::*;

/// A lane's draws: each the hash of its seed, lane and draw number, so a seed replays a
/// session's plans (std's hasher has fixed keys).
pub(super) struct Draws {
    pub(super) seed: u64,
    pub(super) lane: usize,
    pub(super) drawn: u64,
}

impl Draws {
    pub(super) fn new(seed: u64, lane: usize) -> Draws {
        Draws {
            seed,
            lane,
            drawn: 0,
        }
    }

    /// A number in `0..n`.
    pub(super) fn below(&mut self, n: usize) -> usize {
        let mut hasher = DefaultHasher::new();
        (self.seed, self.lane, self.drawn).hash(&mut hasher);
        self.drawn += 1;
        (hasher.finish() % n.max(1) as u64) as usize
    }
}

/// Where a worker is killed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Point {
    /// A model call of the given turn in flight (the model holds its reply).
    Model(usize),
    /// The run waits for an answer.
    Waiting,
    /// The k-th answer was just taken.
    Answered(usize),
    /// Inside the purchase of the item, before its order.
    Before(String),
    /// Inside the purchase of the item, after its order, before the step completes.
    After(String),
}

impl Point {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Point::Model(0) => "the model call in flight, first turn",
            Point::Model(_) => "the model call in flight, second turn",
            Point::Waiting => "the run waiting for an answer",
            Point::Answered(_) => "right after an answer is taken",
            Point::Before(_) => "inside a purchase, before its effect",
            Point::After(_) => "inside a purchase, after its effect",
        }
    }

    /// The name a worker stops at, for the points inside a worker's tool.
    pub(super) fn in_worker(&self) -> Option<String> {
        match self {
            Point::Before(item) => Some(shop::before_effect(item)),
            Point::After(item) => Some(shop::after_effect(item)),
            _ => None,
        }
    }
}

/// One run: what it buys, which purchases are approved, where its workers are killed.
pub(super) struct Plan {
    pub(super) workflow: String,
    pub(super) names: Vec<String>,
    pub(super) items: Vec<String>,
    pub(super) approved: Vec<bool>,
    pub(super) kills: Vec<Point>,
    /// Whether a killed worker's run is left on its sticky queue, for Temporal to move its
    /// next task to the task queue once the sticky queue's wait times out (10 s); otherwise
    /// the harness clears the run's stickiness at once (`ResetStickyTaskQueue`) and the
    /// next worker takes that task straight away.
    pub(super) sticky: bool,
}

impl Plan {
    /// Run `n` of a lane: one or two items, a quarter of the purchases declined, and one to
    /// three kills, the first at a kind of point that rotates with `n` so every kind is hit.
    pub(super) fn draw(workflow: String, n: usize, rng: &mut Draws) -> Plan {
        let count = 1 + rng.below(2);
        let first = rng.below(NAMES.len());
        let names: Vec<String> = (0..count)
            .map(|i| NAMES[(first + i) % NAMES.len()].to_owned())
            .collect();
        let items: Vec<String> = names.iter().map(|n| shop::item_of(&workflow, n)).collect();
        let approved: Vec<bool> = (0..count).map(|_| rng.below(4) != 0).collect();
        // Every moment of the run in the order it comes, each a possible kill.
        let mut moments = vec![Point::Model(0), Point::Waiting];
        moments.extend((0..count).map(Point::Answered));
        for (item, ok) in items.iter().zip(&approved) {
            if *ok {
                moments.push(Point::Before(item.clone()));
                moments.push(Point::After(item.clone()));
            }
        }
        moments.push(Point::Model(1));
        let kinds = kinds();
        let wanted = kinds[n % kinds.len()];
        let mut kills: BTreeSet<usize> = moments
            .iter()
            .position(|p| p.kind() == wanted)
            .into_iter()
            .collect();
        let more = if kills.is_empty() { 1 } else { 0 } + rng.below(3);
        for _ in 0..more {
            kills.insert(rng.below(moments.len()));
        }
        let kills = kills.into_iter().map(|i| moments[i].clone()).collect();
        Plan {
            workflow,
            names,
            items,
            approved,
            kills,
            sticky: rng.below(4) == 0,
        }
    }

    pub(super) fn prompt(&self) -> String {
        shop::prompt(&self.workflow, &self.names)
    }

    pub(super) fn kills_at(&self, point: &Point) -> bool {
        self.kills.contains(point)
    }
}

/// Every kind of point, in the order the lanes' runs start with them.
pub(super) fn kinds() -> [&'static str; 6] {
    [
        Point::Model(0),
        Point::Waiting,
        Point::Before(String::new()),
        Point::Answered(0),
        Point::After(String::new()),
        Point::Model(1),
    ]
    .map(|p| p.kind())
}
