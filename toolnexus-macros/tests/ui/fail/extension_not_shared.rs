use std::rc::Rc;

use toolnexus::{tool, Ext};

/// Reads a value that cannot be shared between threads
#[tool]
async fn read(counter: Ext<Rc<u32>>) -> String {
    counter.to_string()
}

fn main() {}
