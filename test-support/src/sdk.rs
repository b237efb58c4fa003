//! The Python the test command sets up with the official SDKs (`scripts/test.sh` makes a
//! venv and exports `TOOLNEXUS_TEST_PYTHON`): one place that finds it, so a suite run
//! without the test command fails saying how to get what it needs.

/// The venv's Python; panics naming `needs` (what `pip install` would give a Python of the
/// caller's: `mcp`, `'a2a-sdk[http-server]==1.3.0'`…) when the test command did not set it.
pub fn python(needs: &str) -> String {
    std::env::var("TOOLNEXUS_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_PYTHON is not set: run the tests with scripts/test.sh (it makes a \
             venv with the official SDKs), or point it at a python where `pip install {needs}` \
             was done"
        )
    })
}
