//! Golden transcripts: a driven run written as stable text, compared with a file kept in
//! the repository, and rewritten when `TOOLNEXUS_UPDATE_GOLDEN=1`.

use std::fmt::Write as _;
use std::path::Path;

use super::approvers::Verdict;
use super::drive::Driven;
use crate::Message;

/// The variable that turns a golden comparison into an update of the file.
pub const UPDATE_GOLDEN: &str = "TOOLNEXUS_UPDATE_GOLDEN";

impl Driven {
    /// The run as stable text: the questions asked with their answers, the transcript
    /// (each message on a line of its own, a tool call's arguments as JSON), and the status.
    /// Every UUID (a generated request id, a derived one) is written `<id-1>`, `<id-2>`, …
    /// in the order it first appears, so the text is the same on every run of the test.
    pub fn golden_text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_golden(&mut out);
        normalize_ids(&out)
    }

    fn write_golden(&self, out: &mut String) -> std::fmt::Result {
        writeln!(out, "questions:")?;
        if self.questions.is_empty() {
            writeln!(out, "  (none)")?;
        }
        for (i, question) in self.questions.iter().enumerate() {
            writeln!(out, "  {}. {question}", i + 1)?;
        }
        writeln!(out, "transcript:")?;
        for message in &self.result.messages {
            match message {
                Message::System { content } => line(out, "system", content)?,
                Message::User { content, .. } => line(out, "user", content)?,
                Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } => {
                    if !content.is_empty() || tool_calls.is_empty() {
                        line(out, "assistant", content)?;
                    }
                    for call in tool_calls {
                        writeln!(
                            out,
                            "  assistant calls {} {} {}",
                            call.id, call.name, call.args
                        )?;
                    }
                }
                Message::ToolResults { results } => {
                    for result in results {
                        let mut head = format!("tool {} {}", result.call_id, result.name);
                        if let Some(approval) = &result.approval {
                            let _ = write!(head, " [gate {}]", Verdict(approval));
                        }
                        if result.is_pending() {
                            head.push_str(" (waiting)");
                        } else if result.is_error {
                            head.push_str(" (error)");
                        }
                        line(out, &head, &result.output)?;
                    }
                }
            }
        }
        writeln!(out, "status: {}", self.result.status.as_str())
    }

    /// Compares the run's [`golden_text`](Self::golden_text) with the file at `path`
    /// (relative to the working directory: a package's root under `cargo test`).
    ///
    /// # Panics
    ///
    /// When they differ, with a line diff (`-` the file, `+` this run), or when the file
    /// does not exist; with `TOOLNEXUS_UPDATE_GOLDEN=1` in the environment the file is
    /// written instead (its folders created), and the comparison passes.
    pub fn assert_golden(&self, path: impl AsRef<Path>) {
        assert_golden(path, &self.golden_text());
    }
}

/// One message, its later lines indented under its first.
fn line(out: &mut String, head: &str, text: &str) -> std::fmt::Result {
    let mut lines = text.lines();
    writeln!(out, "  {head}: {}", lines.next().unwrap_or_default())?;
    for more in lines {
        writeln!(out, "  {:width$}  {more}", "", width = head.len())?;
    }
    Ok(())
}

/// Compares `actual` with the file at `path`, or writes it there when
/// `TOOLNEXUS_UPDATE_GOLDEN=1`; see [`Driven::assert_golden`].
///
/// # Panics
///
/// When they differ (with a line diff), when the file is missing, or when it cannot be
/// read or written.
///
/// ```
/// let file = std::env::temp_dir().join(format!("golden-{}.txt", std::process::id()));
/// std::fs::write(&file, "status: done\n").unwrap();
/// toolnexus::testing::assert_golden(&file, "status: done\n");
/// let wrong = std::panic::catch_unwind(|| toolnexus::testing::assert_golden(&file, "status: pending\n"));
/// # std::fs::remove_file(&file).unwrap();
/// # let updating = std::env::var_os(toolnexus::testing::UPDATE_GOLDEN).is_some();
/// assert!(wrong.is_err() || updating);
/// ```
pub fn assert_golden(path: impl AsRef<Path>, actual: &str) {
    let update = std::env::var_os(UPDATE_GOLDEN).is_some_and(|v| v == "1");
    compare(path.as_ref(), actual, update);
}

/// [`assert_golden`], told whether to update rather than read the environment.
fn compare(path: &Path, actual: &str, update: bool) {
    if update {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        std::fs::write(path, actual)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let expected = match std::fs::read_to_string(path) {
        Ok(text) => text.replace("\r\n", "\n"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "no golden file at {}: run the test with {UPDATE_GOLDEN}=1 to write it. This run \
             gave:\n{actual}",
            path.display()
        ),
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    };
    if expected != actual {
        panic!(
            "the run differs from {} (- the file, + this run); run the test with \
             {UPDATE_GOLDEN}=1 to accept it:\n{}",
            path.display(),
            diff(&expected, actual)
        );
    }
}

/// A line diff of `expected` and `actual`: lines only in `expected` start with `-`, only
/// in `actual` with `+`, shared ones with two spaces; long shared stretches are cut to
/// their ends.
fn diff(expected: &str, actual: &str) -> String {
    let old: Vec<&str> = expected.lines().collect();
    let new: Vec<&str> = actual.lines().collect();
    // The longest common subsequence's length from each pair of positions to the end.
    let mut common = vec![vec![0u32; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let mut lines: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            lines.push((' ', old[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < old.len() && (j == new.len() || common[i + 1][j] >= common[i][j + 1]) {
            lines.push(('-', old[i]));
            i += 1;
        } else {
            lines.push(('+', new[j]));
            j += 1;
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') {
        lines.push(('!', "(the two differ in their final newline)"));
    }
    let mut out = String::new();
    let mut k = 0;
    while k < lines.len() {
        let same = lines[k..].iter().take_while(|(m, _)| *m == ' ').count();
        const CONTEXT: usize = 2;
        if same > 2 * CONTEXT + 1 {
            let shown_before = if k == 0 { 0 } else { CONTEXT };
            let shown_after = if k + same == lines.len() { 0 } else { CONTEXT };
            for (_, text) in &lines[k..k + shown_before] {
                let _ = writeln!(out, "  {text}");
            }
            let _ = writeln!(
                out,
                "  … {} unchanged line(s)",
                same - shown_before - shown_after
            );
            for (_, text) in &lines[k + same - shown_after..k + same] {
                let _ = writeln!(out, "  {text}");
            }
            k += same;
            continue;
        }
        let (mark, text) = lines[k];
        let _ = writeln!(out, "{mark} {text}");
        k += 1;
    }
    out
}

/// `text` with every UUID replaced by `<id-N>`, numbered in order of first appearance.
fn normalize_ids(text: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(|c: char| c.is_ascii_hexdigit()) {
        let candidate = rest.get(at..at + 36).filter(|c| is_uuid(c));
        // A UUID inside a longer run of hex digits is not one.
        let bounded = at == 0 || !rest.as_bytes()[at - 1].is_ascii_hexdigit();
        match candidate {
            Some(uuid)
                if bounded && !rest[at + 36..].starts_with(|c: char| c.is_ascii_hexdigit()) =>
            {
                let n = match seen.iter().position(|s| *s == uuid) {
                    Some(n) => n + 1,
                    None => {
                        seen.push(uuid);
                        seen.len()
                    }
                };
                out.push_str(&rest[..at]);
                let _ = write!(out, "<id-{n}>");
                rest = &rest[at + 36..];
            }
            _ => {
                let step = at + rest[at..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&rest[..step]);
                rest = &rest[step..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `s` is a UUID in its hyphenated form (8-4-4-4-12 hex digits).
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::{compare, diff, normalize_ids};

    #[test]
    fn an_update_writes_the_file_and_its_folders_and_then_the_run_matches_it() {
        let dir = std::env::temp_dir().join(format!("toolnexus-golden-{}", std::process::id()));
        let file = dir.join("nested").join("run.txt");
        compare(&file, "status: done\n", true);
        assert_eq!(
            std::fs::read_to_string(&file).ok().as_deref(),
            Some("status: done\n")
        );
        compare(&file, "status: done\n", false);
        let changed = std::panic::catch_unwind(|| compare(&file, "status: pending\n", false));
        compare(&file, "status: pending\n", true);
        compare(&file, "status: pending\n", false);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(changed.is_err(), "a changed run fails until it is accepted");
    }

    #[test]
    fn uuids_are_numbered_in_order_of_first_appearance() {
        let a = "6f1c0d2e-8a3b-4c5d-9e7f-0a1b2c3d4e5f";
        let b = "approval-00000000-0000-5000-8000-000000000001";
        let text = format!("asked {a} then {b}, again {a}; not 123 nor {a}0");
        assert_eq!(
            normalize_ids(&text),
            format!("asked <id-1> then approval-<id-2>, again <id-1>; not 123 nor {a}0")
        );
    }

    #[test]
    fn a_diff_marks_what_each_side_has_alone_and_cuts_long_shared_runs() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\ne\nf\nG\nh\n";
        assert_eq!(
            diff(old, new),
            "  … 4 unchanged line(s)\n  e\n  f\n- g\n+ G\n  h\n"
        );
    }
}
