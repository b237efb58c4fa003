//! `pending_all!`'s runtime half: the suspensions its requests were each written as
//! (by `pending!`'s own expansion) joined into one.

use crate::ToolResult;

/// One suspension on the request of each of `each`, in order. A result that is not a
/// suspension (a `responders` list that names nobody, a form type that is not a form) is
/// the error it already is, and is returned as the whole result: a call cannot ask part
/// of what it meant to.
pub fn pending_all<const N: usize>(each: [ToolResult; N]) -> ToolResult {
    let mut requests = Vec::with_capacity(N);
    for result in each {
        match ToolResult::pending_of(&result) {
            Some(request) => requests.push(request),
            None => return result,
        }
    }
    ToolResult::pending_all(requests)
}
