//! Opening a history database: its folder, file and connection settings, the tables of a
//! new file, the checks that a file is a zmqperf history this build reads, and the
//! migration of an older layout in place.

use super::error::{self, StoreError};
use super::Store;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

/// Layout version this build writes and reads (older ones are migrated when opened).
pub(super) const LAYOUT_VERSION: i64 = 4;
/// `PRAGMA application_id` of a zmqperf history ("zmqp").
const APPLICATION_ID: i64 = 0x7a6d_7170;
/// How long a statement waits for another process's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
const CREATE_TABLES: &str = "
CREATE TABLE runs (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    schema_version INTEGER NOT NULL,
    started_at     TEXT NOT NULL,
    finished_at    TEXT,
    status         TEXT NOT NULL,
    command        TEXT NOT NULL,
    environment    TEXT NOT NULL,
    workload       TEXT,
    cpu_model      TEXT NOT NULL,
    hostname       TEXT NOT NULL,
    owner          TEXT
);
CREATE TABLE cases (
    run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    case_id  TEXT NOT NULL,
    failed   INTEGER NOT NULL,
    data     TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX cases_by_case_id ON cases(case_id);
";

/// What layout version 2 adds to version 1: the findings of `zmqperf diagnose`.
const CREATE_FINDINGS: &str = "
CREATE TABLE findings (
    run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    finding_id TEXT NOT NULL,
    severity   TEXT NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
";

/// What layout version 3 adds to version 2: where imported runs came from (`zmqperf import`).
const CREATE_IMPORTS: &str = "
CREATE TABLE imports (
    run_id          TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    original_run_id TEXT NOT NULL,
    content_sha256  TEXT NOT NULL,
    file            TEXT NOT NULL,
    from_host       TEXT NOT NULL,
    imported_at     TEXT NOT NULL
);
CREATE INDEX imports_by_original ON imports(original_run_id, content_sha256);
";

/// What layout version 4 adds to version 3: the limits (`--find`) and the load curves
/// (`--curve`) of a run, beside its step cases.
const CREATE_OUTCOMES: &str = "
CREATE TABLE outcomes (
    run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    data     TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
";

impl Store {
    /// Opens the history at `path`, creating the file, its folder and its tables if absent.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        check_file_kind(&path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: path.clone(),
                reason: format!("cannot create folder {}: {e}", dir.display()),
            })?;
        }
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            reason: error::open_reason(&e),
        };
        let conn = Connection::open(&path).map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // WAL: readers never block the writer, and a commit is one append. FULL sync makes
        // each committed case survive a power cut too, not just a crash of the process.
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
            .map_err(open_err)?;
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(open_err)?;
        let identity = identity_of(&path);
        let mut store = Store {
            conn,
            path,
            identity,
            imports: true,
            outcomes: true,
        };
        store.prepare_layout()?;
        Ok(store)
    }

    /// Opens the history at `path` only if the file exists (for `history`, `show`,
    /// `report` and `compare`, which have nothing to read in a new file). A file this user
    /// may not write (a shared or archived history) is opened read-only.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        if !check_file_kind(path)? {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let writable = std::fs::OpenOptions::new().write(true).open(path).is_ok();
        if writable {
            Store::open(path)
        } else {
            Store::open_read_only(path)
        }
    }

    /// Opens an existing history for reading only: nothing is created, migrated or locked
    /// for writing. A history in write-ahead-log mode needs its `-shm` file; where that
    /// cannot be created (a read-only folder), the file is read as immutable.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        check_file_kind(&path)?;
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            reason: error::open_reason(&e),
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
        let try_open = |conn: Connection| -> Result<Connection, rusqlite::Error> {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            })?;
            Ok(conn)
        };
        let conn = match Connection::open_with_flags(&path, flags).and_then(try_open) {
            Ok(c) => c,
            Err(_) => {
                let uri = format!("file:{}?immutable=1", uri_path(&path));
                Connection::open_with_flags(uri, flags)
                    .and_then(try_open)
                    .map_err(open_err)?
            }
        };
        let identity = identity_of(&path);
        let mut store = Store {
            conn,
            path,
            identity,
            imports: true,
            outcomes: true,
        };
        let layout = store.check_layout_read_only()?;
        store.imports = layout >= 3;
        store.outcomes = layout >= 4;
        Ok(store)
    }

    /// The checks of [`Store::prepare_layout`] for a file that cannot be changed; returns
    /// its layout version. A version 2 file is read as it is (it has no imported runs).
    fn check_layout_read_only(&self) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            reason: error::open_reason(&e),
        };
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(open_err)?;
        let app_id: i64 = self
            .conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(open_err)?;
        if version == 0 || app_id != APPLICATION_ID {
            return Err(StoreError::Open {
                path,
                reason: "it is not a zmqperf history (or an empty file)".to_string(),
            });
        }
        if version > LAYOUT_VERSION {
            return Err(StoreError::TooNew {
                path,
                found: version,
                supported: LAYOUT_VERSION,
            });
        }
        if version < 2 {
            return Err(StoreError::Open {
                path,
                reason: format!(
                    "it has layout {version}, which this build upgrades in place, and it is read-only: make it writable once (chmod u+w) and run zmqperf history"
                ),
            });
        }
        Ok(version)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long a statement waits for another process's lock before it fails (10 s
    /// unless changed; tests shorten it).
    pub fn set_busy_timeout(&mut self, wait: Duration) -> Result<(), StoreError> {
        let path = self.path.clone();
        self.conn
            .busy_timeout(wait)
            .map_err(|e| StoreError::sqlite(&path, "setting how long to wait for a lock", e))
    }

    /// Checks, after a run's last write, that what was written is kept: the path still
    /// names the file that was opened (same device and inode: not deleted, not replaced)
    /// and the file is sound (`PRAGMA quick_check`).
    pub fn check_kept(&self) -> Result<(), StoreError> {
        let gone = |what: String| StoreError::Gone {
            path: self.path.clone(),
            what,
        };
        match (std::fs::metadata(&self.path), self.identity) {
            (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(gone("the file was deleted".to_string()))
            }
            (Err(e), _) => {
                return Err(gone(format!("the file cannot be looked at any more ({e})")))
            }
            (Ok(m), Some(id)) if (m.dev(), m.ino()) != id => {
                return Err(gone(
                    "the file was replaced by another one (it is not the file zmqperf opened)"
                        .to_string(),
                ))
            }
            _ => {}
        }
        // A connection of its own: this one's page cache may still hold what the file
        // held before it was overwritten.
        let mut problems = Vec::new();
        let fresh = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        );
        let checked = fresh.and_then(|c| {
            let mut st = c.prepare("PRAGMA quick_check")?;
            let rows = st.query_map([], |r| r.get::<_, String>(0))?;
            for r in rows {
                problems.push(r?);
            }
            Ok(())
        });
        match checked {
            Err(e) => Err(gone(format!("the file is damaged ({e})"))),
            Ok(()) if problems != ["ok"] => Err(gone(format!(
                "the file is damaged (quick_check: {})",
                problems.join("; ")
            ))),
            Ok(()) => Ok(()),
        }
    }

    /// Checks the file is a zmqperf history this build reads, creating the tables in a new one.
    fn prepare_layout(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            reason: error::open_reason(&e),
        };
        // IMMEDIATE: two processes opening a new file at once do not both create the tables.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(open_err)?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(open_err)?;
        let app_id: i64 = tx
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(open_err)?;
        if version == 0 {
            let tables: i64 = tx
                .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(open_err)?;
            if tables > 0 {
                return Err(StoreError::Open {
                    path,
                    reason: "it is an SQLite database of something else, not a zmqperf history"
                        .to_string(),
                });
            }
            tx.execute_batch(CREATE_TABLES).map_err(open_err)?;
            tx.execute_batch(CREATE_FINDINGS).map_err(open_err)?;
            tx.execute_batch(CREATE_IMPORTS).map_err(open_err)?;
            tx.execute_batch(CREATE_OUTCOMES).map_err(open_err)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(open_err)?;
            tx.pragma_update(None, "user_version", LAYOUT_VERSION)
                .map_err(open_err)?;
        } else if app_id != APPLICATION_ID {
            return Err(StoreError::Open {
                path,
                reason: "it is an SQLite database of something else, not a zmqperf history"
                    .to_string(),
            });
        } else if version > LAYOUT_VERSION {
            return Err(StoreError::TooNew {
                path,
                found: version,
                supported: LAYOUT_VERSION,
            });
        } else if version < LAYOUT_VERSION {
            // Version 1 -> 2: the findings table; 2 -> 3: the imports table; 3 -> 4: the
            // outcomes table. Runs and cases are unchanged.
            if version == 1 {
                tx.execute_batch(CREATE_FINDINGS).map_err(open_err)?;
            }
            if version <= 2 {
                tx.execute_batch(CREATE_IMPORTS).map_err(open_err)?;
            }
            tx.execute_batch(CREATE_OUTCOMES).map_err(open_err)?;
            tx.pragma_update(None, "user_version", LAYOUT_VERSION)
                .map_err(open_err)?;
        }
        tx.commit().map_err(open_err)
    }
}

/// Checks that `path` is a regular file, or nothing yet (returns whether it exists). A
/// folder, a named pipe, a device or a socket is refused before SQLite opens it: opening a
/// named pipe would block until a writer came, and the others fail obscurely. The check
/// follows symbolic links (a link to a history is fine) and never opens the path.
pub(super) fn check_file_kind(path: &Path) -> Result<bool, StoreError> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        // Not readable (a folder on the way without search permission): SQLite says why.
        Err(_) => return Ok(true),
    };
    let t = meta.file_type();
    let kind = if t.is_file() {
        return Ok(true);
    } else if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "something other than a regular file"
    };
    Err(StoreError::NotAFile {
        path: path.to_path_buf(),
        kind,
    })
}

/// Device and inode of the file at `path` (None if it cannot be looked at).
fn identity_of(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A path as the path part of an SQLite file: URI (`%`, `?` and `#` escaped).
fn uri_path(p: &Path) -> String {
    let s = p.to_string_lossy();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}
