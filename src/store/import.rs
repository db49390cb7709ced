//! `zmqperf import`: a run exported on another machine (`zmqperf report RUN --format json`)
//! read back, checked, and recorded in this history under a new id with a mark of where it
//! came from. A file that is not JSON, not a zmqperf run, damaged, of a newer schema, or a
//! run this history already holds is refused with what is wrong and the fix.

use super::error::StoreError;
use super::Store;
use crate::model::envelope::{RunEnvelope, RUN_KIND};
use crate::model::{Imported, RunResult, SCHEMA_VERSION};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::time::SystemTime;

/// The exit code of an import refused because the history already holds the run.
pub const ALREADY_IMPORTED: i32 = 21;

/// How a run is exported for import, said in every refusal of a file.
const EXPORT_HINT: &str =
    "export the run with `zmqperf report RUN --format json -o run.json` on the machine that recorded it";

/// Why `zmqperf import` refused a file.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file cannot be read.
    #[error("cannot import {file}: cannot read it: {source}; check the path and its permissions")]
    Read {
        /// The file as given (`standard input` for `-`).
        file: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON at all.
    #[error("cannot import {file}: it is not JSON ({looks_like}); {EXPORT_HINT}")]
    NotJson {
        /// The file as given.
        file: String,
        /// What it seems to be instead.
        looks_like: String,
    },
    /// The file is JSON that ends early or breaks off: a copy cut short, or edited.
    #[error("cannot import {file}: it is damaged: {what} (line {line}, column {column}); copy the whole file again, or {EXPORT_HINT}")]
    Damaged {
        /// The file as given.
        file: String,
        /// What is wrong, e.g. `the JSON ends early, as a file cut short does`.
        what: String,
        /// Where (1-based).
        line: usize,
        /// Where (1-based).
        column: usize,
    },
    /// The file is JSON, but not a zmqperf run.
    #[error("cannot import {file}: it is not a zmqperf run: {why}; {EXPORT_HINT}")]
    NotARun {
        /// The file as given.
        file: String,
        /// What it is, or what it lacks.
        why: String,
    },
    /// A field of the run has the wrong type or value.
    #[error("cannot import {file}: its run is damaged or not written by zmqperf: at `{field}`: {reason}; {EXPORT_HINT}")]
    BadField {
        /// The file as given.
        file: String,
        /// Where in the run, e.g. `cases[2].summary.latency_us.median`.
        field: String,
        /// What is wrong there.
        reason: String,
    },
    /// The run was written by a newer zmqperf whose format this build does not know.
    #[error("cannot import {file}: its run has schema version {found}, newer than this zmqperf reads (up to {supported}); upgrade zmqperf on this machine, or export the run with a zmqperf that writes version {supported}")]
    TooNew {
        /// The file as given.
        file: String,
        /// `schema_version` of the file.
        found: u64,
        /// What this build reads.
        supported: u32,
    },
    /// This history already holds the run.
    #[error("cannot import {file}: run {original_run_id} is already in history database {db} as {local_run_id} ({how}); nothing was imported: see it with `zmqperf show {local_run_id}`")]
    AlreadyImported {
        /// The file as given.
        file: String,
        /// The history.
        db: String,
        /// The run's id where it was made.
        original_run_id: String,
        /// Its id in this history.
        local_run_id: String,
        /// `imported from FILE at TIME`, or `recorded here`.
        how: String,
    },
    /// The history failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl crate::error::CodedError for ImportError {
    fn exit_code(&self) -> i32 {
        ImportError::exit_code(self)
    }
}

impl From<ImportError> for crate::error::Error {
    fn from(e: ImportError) -> Self {
        crate::error::Error::Import(Box::new(e))
    }
}

impl ImportError {
    /// The exit code: 11 for a file that cannot be read (an I/O error, as elsewhere), 3 for
    /// a file that is not an importable run (a bad input, as a topology file's mistake), 21
    /// for a run already in the history, and the store's codes for its own failures.
    pub fn exit_code(&self) -> i32 {
        match self {
            ImportError::Read { .. } => 11,
            ImportError::NotJson { .. }
            | ImportError::Damaged { .. }
            | ImportError::NotARun { .. }
            | ImportError::BadField { .. }
            | ImportError::TooNew { .. } => 3,
            ImportError::AlreadyImported { .. } => ALREADY_IMPORTED,
            ImportError::Store(e) => e.exit_code(),
        }
    }
}

/// The name of a file in messages: `standard input` for `-`.
pub fn display_name(file: &str) -> String {
    if file == "-" {
        "standard input".to_string()
    } else {
        file.to_string()
    }
}

/// Reads and checks the exported run in `file` (`-` for standard input).
pub fn read_export(file: &str) -> Result<RunResult, ImportError> {
    let name = display_name(file);
    let read_err = |source| ImportError::Read {
        file: name.clone(),
        source,
    };
    let bytes = if file == "-" {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).map_err(read_err)?;
        b
    } else {
        std::fs::read(file).map_err(read_err)?
    };
    parse_export(&bytes, &name)
}

/// What a file that is not JSON seems to be.
fn looks_like(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]);
    let start = text.trim_start();
    if bytes.starts_with(b"SQLite format 3\0") {
        return "an SQLite database, perhaps a zmqperf history: to export a run from it, give it to `zmqperf report` with --db FILE".to_string();
    }
    if std::str::from_utf8(bytes).is_err() && bytes.contains(&0) {
        return "binary data".to_string();
    }
    let lower = start.to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        return "an HTML report: import takes the JSON report".to_string();
    }
    if start.starts_with("id,kind,") {
        return "a CSV report: import takes the JSON report".to_string();
    }
    if start.starts_with("# zmqperf run") {
        return "a Markdown report: import takes the JSON report".to_string();
    }
    if start.starts_with("zmqperf run") {
        return "a text report: import takes the JSON report".to_string();
    }
    let first: String = start.chars().take(24).collect();
    format!("it begins with {first:?}")
}

/// Reads an exported run from the bytes of `file` (its name in messages), checking in turn
/// that it is JSON, whole, a zmqperf run, of a schema this build reads, and well-formed.
pub fn parse_export(bytes: &[u8], file: &str) -> Result<RunResult, ImportError> {
    let value = json_of(bytes, file)?;
    let (run, at): (RunResult, &str) = if value.get("kind").is_some() {
        (enveloped_run(&value, file)?.into(), "run.")
    } else {
        (flat_run(&value, file)?, "")
    };
    well_formed(&run, file, at)?;
    Ok(run)
}

/// A run of version 3 and later: the envelope of `zmqperf run --format json`, `show` or
/// `export`.
fn enveloped_run(value: &Value, file: &str) -> Result<RunEnvelope, ImportError> {
    let kind = value["kind"].as_str().unwrap_or("");
    if kind != RUN_KIND {
        return Err(ImportError::NotARun {
            file: file.to_string(),
            why: format!(
                "it is the JSON of `zmqperf {kind}` (kind {:?}), not a recorded run (kind \"run\", \
                 as `zmqperf run --format json`, `show` and `export` write it)",
                value["kind"]
            ),
        });
    }
    match value.get("version").and_then(Value::as_u64) {
        Some(n) if n >= 3 => not_newer(n, file)?,
        _ => {
            return Err(ImportError::NotARun {
                file: file.to_string(),
                why: format!(
                    "its version is {}, and an envelope's is 3 to {SCHEMA_VERSION}",
                    value.get("version").unwrap_or(&Value::Null)
                ),
            })
        }
    }
    deserialize(value, file)
}

/// A run of versions 1 and 2: its fields at the top level, without an envelope.
fn flat_run(value: &Value, file: &str) -> Result<RunResult, ImportError> {
    is_a_run(value, file)?;
    deserialize(value, file)
}

/// `value` as a `T`, or the field that is not as it should be.
fn deserialize<T: serde::de::DeserializeOwned>(
    value: &Value,
    file: &str,
) -> Result<T, ImportError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        ImportError::BadField {
            file: file.to_string(),
            field: if field == "." {
                "(the run)".to_string()
            } else {
                field
            },
            reason: e.into_inner().to_string(),
        }
    })
}

/// The JSON of `file`'s bytes: not empty, an object or array, parsed whole.
fn json_of(bytes: &[u8], file: &str) -> Result<Value, ImportError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => {
            return Err(ImportError::NotJson {
                file: file.to_string(),
                looks_like: "it is empty".to_string(),
            })
        }
        Some(b'{') | Some(b'[') => {}
        Some(_) => {
            return Err(ImportError::NotJson {
                file: file.to_string(),
                looks_like: looks_like(bytes),
            })
        }
    }
    serde_json::from_slice(bytes).map_err(|e| {
        let what = if e.is_eof() {
            "the JSON ends early, as a file cut short does".to_string()
        } else {
            format!("invalid JSON: {}", strip_position(&e.to_string()))
        };
        ImportError::Damaged {
            file: file.to_string(),
            what,
            line: e.line(),
            column: e.column(),
        }
    })
}

/// Whether the JSON `value` is a run (not another of zmqperf's outputs) of a schema this
/// build reads.
fn is_a_run(value: &Value, file: &str) -> Result<(), ImportError> {
    let not_a_run = |why: String| ImportError::NotARun {
        file: file.to_string(),
        why,
    };
    let Value::Object(obj) = value else {
        return Err(not_a_run(format!(
            "it is a JSON {}, and a run is an object",
            kind_of(value)
        )));
    };
    let has = |k: &str| obj.contains_key(k);
    if !(has("run_id") && has("environment") && has("cases")) {
        let why = if has("per_subscriber") || has("subs_per_process") {
            "it is a fan-out report (`zmqperf fanout --json` or `sub-cluster --json`), which is not recorded in the history".to_string()
        } else if has("nodes") && !has("run_id") {
            "it looks like a topology file (nodes and sockets); run it with `zmqperf run FILE`"
                .to_string()
        } else if has("message_size") && !has("run_id") {
            "it looks like the --json line of a compatible command (local_lat, remote_thr, ...), which is not a run".to_string()
        } else {
            let missing: Vec<&str> = ["run_id", "environment", "cases"]
                .into_iter()
                .filter(|k| !has(k))
                .collect();
            format!("it has no {}", missing.join(", "))
        };
        return Err(not_a_run(why));
    }
    match obj.get("schema_version") {
        None => return Err(not_a_run("it has no schema_version".to_string())),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => not_newer(n, file)?,
            _ => {
                let why = format!("its schema_version is {v}, not one zmqperf writes");
                return Err(not_a_run(format!("{why} (1 to {SCHEMA_VERSION})")));
            }
        },
    }
    Ok(())
}

/// Refuses a file of a version newer than this build reads (read first: a newer format may
/// have changed the fields).
fn not_newer(found: u64, file: &str) -> Result<(), ImportError> {
    if found > u64::from(SCHEMA_VERSION) {
        return Err(ImportError::TooNew {
            file: file.to_string(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// The fields of a parsed run that its type does not check: an id and a known status
/// (named in the file as `at` + field: `run.` in an envelope).
fn well_formed(run: &RunResult, file: &str, at: &str) -> Result<(), ImportError> {
    let bad = |field: &str, reason: String| ImportError::BadField {
        file: file.to_string(),
        field: format!("{at}{field}"),
        reason,
    };
    if run.run_id.trim().is_empty() {
        return Err(bad(
            if at.is_empty() { "run_id" } else { "id" },
            "it is empty".to_string(),
        ));
    }
    if !super::write::STATUSES.contains(&run.status.as_str()) {
        return Err(bad(
            "status",
            format!(
                "'{}' is not a run's status (complete, interrupted, partial or running)",
                run.status
            ),
        ));
    }
    Ok(())
}

/// `object`, `array`, ... for messages.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// serde_json's message without its ` at line L column C` (the error says where itself).
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The id a run had where it was made: its original id if it was itself imported.
pub fn original_id(run: &RunResult) -> &str {
    run.imported
        .as_ref()
        .map_or(run.run_id.as_str(), |i| i.original_run_id.as_str())
}

/// SHA-256 (hex) of a run's content: the run with its original id and without an import
/// mark, as compact JSON. A run exported twice, or exported again from a history that
/// imported it, has the same hash.
pub fn content_sha256(run: &RunResult) -> String {
    let mut r = run.clone();
    r.run_id = original_id(run).to_string();
    r.imported = None;
    let json = serde_json::to_vec(&r).unwrap_or_default();
    let digest = Sha256::digest(&json);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Store {
    /// Records `run`, read from `file` (its name as the user gave it), as an imported run:
    /// under a new id made from `now`, with its original id, time and environment, and a
    /// mark saying where it came from. Refused when this history already holds the same
    /// run (same original id and content), imported or recorded here. Returns the run as
    /// recorded.
    pub fn import_run(
        &mut self,
        run: &RunResult,
        file: &str,
        now: SystemTime,
    ) -> Result<RunResult, ImportError> {
        let original = original_id(run).to_string();
        let hash = content_sha256(run);
        let db = self.path.display().to_string();
        let already = |local: String, how: String| ImportError::AlreadyImported {
            file: file.to_string(),
            db: db.clone(),
            original_run_id: original.clone(),
            local_run_id: local,
            how,
        };
        if let Some((local, from, at)) = self.imported_as(&original, &hash)? {
            return Err(already(local, format!("imported from {from} at {at}")));
        }
        // A run exported from this very history.
        if self.run_exists(&original)? && self.import_of(&original)?.is_none() {
            let here = self.load_run(&original)?;
            if content_sha256(&here) == hash {
                return Err(already(original.clone(), "recorded here".to_string()));
            }
        }
        let mut local = run.clone();
        local.run_id = self.new_run_id(now)?;
        local.imported = Some(Imported {
            original_run_id: original.clone(),
            file: file.to_string(),
            from_host: run.environment.hostname.clone(),
            imported_at: crate::clock::rfc3339(now),
            content_sha256: hash,
        });
        self.insert_run(
            &local,
            local.status.as_str(),
            local.finished_at.as_deref(),
            None,
            local.imported.as_ref(),
        )?;
        Ok(local)
    }

    /// The local id, file and time of an earlier import of the same run.
    fn imported_as(
        &self,
        original: &str,
        hash: &str,
    ) -> Result<Option<(String, String, String)>, StoreError> {
        use rusqlite::OptionalExtension;
        let sql_err = |e| StoreError::sqlite(&self.path, format!("looking up run {original}"), e);
        self.conn
            .query_row(
                "SELECT run_id, file, imported_at FROM imports
                 WHERE original_run_id = ?1 AND content_sha256 = ?2",
                [original, hash],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(sql_err)
    }

    /// Whether the history holds a run with id `id`.
    fn run_exists(&self, id: &str) -> Result<bool, StoreError> {
        use rusqlite::OptionalExtension;
        let sql_err = |e| StoreError::sqlite(&self.path, format!("looking up run {id}"), e);
        Ok(self
            .conn
            .query_row("SELECT 1 FROM runs WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map_err(sql_err)?
            .is_some())
    }

    /// A run id made from `now` that no run of this history has.
    fn new_run_id(&self, now: SystemTime) -> Result<String, StoreError> {
        loop {
            let id = crate::clock::run_id(now);
            if !self.run_exists(&id)? {
                return Ok(id);
            }
        }
    }
}
