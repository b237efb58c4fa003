//! What the statements' text does for the engines' planners, shared by every table's
//! statements.

/// Written before a parameter a statement compares a column with for equality, on SQLite
/// only: a unary plus, which changes no value. Planning a statement whose rows are not
/// found by a unique key alone, SQLite's planner looks at such a parameter's value (is it
/// 0 or 1?) to estimate the rows, and marks the statement to be prepared again when the
/// parameter is bound anew, unless it stands behind an operator; sqlx clears a statement's
/// parameters before each run, which counts. Without it such a statement is parsed and
/// planned again every time it runs, holding the turn to write meanwhile.
pub(crate) const SQLITE_STABLE: &str = "+";
