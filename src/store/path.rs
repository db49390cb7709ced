//! Where the history database lives: `$ZMQPERF_DB`, else the user's XDG data directory.

use std::ffi::OsString;
use std::path::PathBuf;

/// The environment variable that overrides the database path (as `--db` does).
pub const DB_ENV: &str = "ZMQPERF_DB";

/// The history database path when no `--db` is given.
///
/// `$ZMQPERF_DB` if set, else `$XDG_DATA_HOME/zmqperf/history.db`, else
/// `$HOME/.local/share/zmqperf/history.db`; with none of them set (a bare service account),
/// `zmqperf-history.db` in the current directory. Empty variables count as unset, and a
/// relative `XDG_DATA_HOME` is ignored, as the XDG specification says.
pub fn default_db_path() -> PathBuf {
    db_path_from(|name| std::env::var_os(name))
}

/// Whether [`default_db_path`] is the last resort, `zmqperf-history.db` in the current
/// directory (none of `ZMQPERF_DB`, `XDG_DATA_HOME`, `HOME` set): said where the path is
/// announced, so the file is not a surprise.
pub fn default_is_current_dir() -> bool {
    default_db_path() == std::path::Path::new(FALLBACK)
}

/// The last resort of [`default_db_path`].
const FALLBACK: &str = "zmqperf-history.db";

/// [`default_db_path`] over any source of environment variables (so tests need not touch
/// the process environment).
pub(crate) fn db_path_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    if let Some(p) = set(DB_ENV) {
        return PathBuf::from(p);
    }
    if let Some(p) = set("XDG_DATA_HOME").map(PathBuf::from) {
        if p.is_absolute() {
            return p.join("zmqperf").join("history.db");
        }
    }
    if let Some(home) = set("HOME") {
        return PathBuf::from(home)
            .join(".local")
            .join("share")
            .join("zmqperf")
            .join("history.db");
    }
    PathBuf::from(FALLBACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> PathBuf {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        db_path_from(|name| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn override_then_xdg_then_home() {
        let all = [
            ("ZMQPERF_DB", "/tmp/h.db"),
            ("XDG_DATA_HOME", "/data"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(with(&all), PathBuf::from("/tmp/h.db"));
        assert_eq!(with(&all[1..]), PathBuf::from("/data/zmqperf/history.db"));
        assert_eq!(
            with(&all[2..]),
            PathBuf::from("/home/u/.local/share/zmqperf/history.db")
        );
        assert_eq!(with(&[]), PathBuf::from("zmqperf-history.db"));
    }

    #[test]
    fn empty_and_relative_values_are_skipped() {
        let vars = [("ZMQPERF_DB", ""), ("XDG_DATA_HOME", "rel"), ("HOME", "/h")];
        assert_eq!(
            with(&vars),
            PathBuf::from("/h/.local/share/zmqperf/history.db")
        );
    }
}
