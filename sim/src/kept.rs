//! The kept results: a test's table written to `sim/results/` with `LOAD_SIM_WRITE=1`, and
//! otherwise compared with what is kept there line by line, so that a figure moves only
//! when the law or the model does, and then the file is written again (and read beside the
//! node's figures).

use std::path::PathBuf;

/// Writes `text` to `sim/results/{file}` when `LOAD_SIM_WRITE` is set; otherwise panics,
/// naming each line that differs, unless the kept file holds `text` exactly.
///
/// # Panics
///
/// When the kept file is missing or differs from `text` (and `LOAD_SIM_WRITE` is not set),
/// or when it cannot be written.
pub fn keep(file: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("results")
        .join(file);
    if std::env::var_os("LOAD_SIM_WRITE").is_some() {
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let kept = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (write it with LOAD_SIM_WRITE=1)", path.display()));
    let mut changed: Vec<String> = text
        .lines()
        .zip(kept.lines().chain(std::iter::repeat("")))
        .filter(|(now, was)| now != was)
        .map(|(now, was)| format!("now  {now}\nkept {was}"))
        .collect();
    let (now, was) = (text.lines().count(), kept.lines().count());
    if was > now {
        changed.push(format!("kept {} line(s) more than now", was - now));
    }
    assert!(
        changed.is_empty(),
        "{} moved (write it again with LOAD_SIM_WRITE=1 beside the node's figures):\n{}",
        path.display(),
        changed.join("\n")
    );
}
