//! The end of a run when the history cannot take it: a full disk (a tmpfs this test
//! mounts), a lock another connection holds, a file deleted, replaced or damaged during
//! the run, a path that is not a file; and CURVE secrets kept out of the file.

use super::*;
use crate::report::history::format_history;
use rusqlite::Connection;
use std::io::Write;
use std::time::Duration;

/// A small tmpfs mounted on a fresh folder, unmounted (and the folder removed) when
/// dropped, whatever the test did.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `kib` KiB. Needs root (CAP_SYS_ADMIN): the test says so if not.
    fn mount(kib: u64) -> Tmpfs {
        let t = TempDb::new();
        let dir = t.dir.clone();
        std::mem::forget(t);
        std::fs::create_dir_all(&dir).unwrap();
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(&dir)
            .status()
            .expect("run mount");
        assert!(
            st.success(),
            "mounting a tmpfs failed ({st}): this test needs root to make a full disk"
        );
        Tmpfs { dir }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Fills the file system of `dir` with a file, then frees `keep` bytes of it again.
fn fill_leaving(dir: &std::path::Path, keep: u64) {
    let f = dir.join("filler");
    let mut file = std::fs::File::create(&f).unwrap();
    let block = vec![0x5a_u8; 64 * 1024];
    let mut written = 0u64;
    loop {
        match file.write(&block) {
            Ok(0) => break,
            Ok(n) => written += n as u64,
            Err(_) => break,
        }
    }
    file.sync_all().ok();
    file.set_len(written.saturating_sub(keep)).unwrap();
}

/// A case too large for the space left (its error text is 2 MiB).
fn huge_case() -> CaseResult {
    let mut c = case(4096, None);
    c.warnings = vec!["x".repeat(2 << 20)];
    c
}

#[test]
fn a_full_disk_is_named_as_such_the_run_is_partial_and_the_other_cases_are_kept() {
    let fs = Tmpfs::mount(4096);
    let path = fs.dir.join("h.db");
    let mut store = Store::open(&path).unwrap();
    let mut r = run("20261125-000000-full");
    store.begin_run(&r).unwrap();
    // Room for the small case and the run's end, not for the large one.
    fill_leaving(&fs.dir, 256 * 1024);
    r.cases = vec![case(64, None), huge_case(), case(1024, None)];
    r.status = RunStatus::Complete;
    r.finished_at = Some("2026-11-25T00:00:05Z".into());
    let mut pending = r.cases.clone();
    let mut waited = false;
    let e = store
        .record_rest(&r, &mut pending, Duration::from_secs(30), |_| waited = true)
        .unwrap_err();
    let msg = e.to_string();
    assert!(!waited, "a full disk is not waited on: {msg}");
    assert_eq!(e.exit_code(), 13);
    assert!(msg.contains("the disk holding it is full"), "{msg}");
    assert!(!msg.contains("locked") && !msg.contains("busy"), "{msg}");
    assert!(
        msg.contains("1 of 3 cases of run 20261125-000000-full"),
        "{msg}"
    );
    assert!(msg.contains("recorded as partial"), "{msg}");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].message_size, 4096);
    drop(store);
    let back = Store::open_read_only(&path)
        .unwrap()
        .load_run("last")
        .unwrap();
    assert_eq!(back.status, "partial");
    let sizes: Vec<usize> = back.cases.iter().map(|c| c.message_size).collect();
    assert_eq!(sizes, vec![64, 1024]);
    let listed = Store::open_read_only(&path)
        .unwrap()
        .list_runs(None)
        .unwrap();
    assert!(format_history(&listed).contains("partial"));
}

#[test]
fn a_lock_held_past_the_patience_is_named_and_waited_on_then_what_is_left_is_said() {
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    store.set_busy_timeout(Duration::from_millis(50)).unwrap();
    let mut r = run("20261125-000000-lock");
    store.begin_run(&r).unwrap();
    r.cases = vec![case(64, None)];
    r.status = RunStatus::Complete;
    let other = Connection::open(db.path()).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut pending = r.cases.clone();
    let mut waits = 0;
    let e = store
        .record_rest(&r, &mut pending, Duration::from_millis(300), |e| {
            assert!(e.is_busy(), "{e}");
            waits += 1;
        })
        .unwrap_err();
    let msg = e.to_string();
    assert_eq!(waits, 1, "the wait is announced once");
    assert!(
        msg.contains("another process held the database locked"),
        "{msg}"
    );
    assert!(!msg.contains("disk"), "{msg}");
    assert!(
        msg.contains("1 of 1 cases") && msg.contains("could not be recorded either"),
        "{msg}"
    );
    assert_eq!(pending.len(), 1);
    // Once the lock is gone, the same call records the rest and the run's end.
    other.execute_batch("ROLLBACK").unwrap();
    store
        .record_rest(&r, &mut pending, Duration::from_millis(300), |_| {})
        .unwrap();
    assert!(pending.is_empty());
    let back = store.load_run("last").unwrap();
    assert_eq!((back.status.as_str(), back.cases.len()), ("complete", 1));
}

#[test]
fn partial_is_a_status_the_store_takes() {
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    store.begin_run(&run("20261125-000000-part")).unwrap();
    store
        .finish_run(
            "20261125-000000-part",
            "partial",
            Some("2026-11-25T00:00:01Z"),
        )
        .unwrap();
    assert_eq!(store.load_run("last").unwrap().status, "partial");
    assert!(store
        .finish_run("20261125-000000-part", "half", None)
        .is_err());
}

#[test]
fn a_history_deleted_replaced_or_damaged_during_the_run_is_not_kept() {
    // Sound: kept.
    let db = TempDb::new();
    let store = store_with(&db, &["20261125-000000-kept"]);
    store.check_kept().unwrap();
    // Deleted.
    std::fs::remove_file(db.path()).unwrap();
    let e = store.check_kept().unwrap_err().to_string();
    assert!(e.contains("the file was deleted"), "{e}");
    // Replaced by another file (another history, even a sound one).
    let db = TempDb::new();
    let store = store_with(&db, &["20261125-000000-repl"]);
    let other = TempDb::new();
    drop(store_with(&other, &["20261125-000000-othr"]));
    std::fs::rename(other.path(), db.path()).unwrap();
    let e = store.check_kept().unwrap_err();
    assert_eq!(e.exit_code(), 13);
    assert!(e.to_string().contains("replaced by another one"), "{e}");
    // Damaged in place: pages overwritten with garbage.
    let db = TempDb::new();
    let store = store_with(&db, &["20261125-000000-dmgd"]);
    store
        .conn
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(db.path())
        .unwrap();
    use std::io::{Seek, SeekFrom};
    f.seek(SeekFrom::Start(4096)).unwrap();
    f.write_all(&vec![0xa5_u8; 8192]).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let e = store.check_kept().unwrap_err().to_string();
    assert!(e.contains("damaged"), "{e}");
}

#[test]
fn a_path_that_is_not_a_regular_file_is_refused_without_opening_it() {
    let db = TempDb::new();
    std::fs::create_dir_all(&db.dir).unwrap();
    let fifo = db.dir.join("f.db");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (p, kind) in [
        (fifo.clone(), "named pipe"),
        (db.dir.clone(), "folder"),
        (PathBuf::from("/dev/null"), "character device"),
    ] {
        for e in [
            Store::open(&p).unwrap_err(),
            Store::open_existing(&p).unwrap_err(),
            Store::open_read_only(&p).unwrap_err(),
        ] {
            assert_eq!(e.exit_code(), 13);
            assert!(e.to_string().contains(kind), "{e}");
        }
    }
}

#[test]
fn curve_secrets_in_a_workload_never_reach_the_file() {
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    let mut r = run("20261125-000000-curv");
    let secret = "{X}#>t#jRGaQ}gMhv=30r(Mw+87YGs+5%kh=i@f8";
    r.workload = Some(Workload {
        path: "curve.toml".into(),
        text: format!("[[node]]\nsocket = {{ curve_keys = {{ server_secret = {secret:?} }} }}\n"),
    });
    r.status = RunStatus::Complete;
    store.save_run(&r).unwrap();
    store
        .conn
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let bytes = std::fs::read(db.path()).unwrap();
    assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()));
    let back = store.load_run("last").unwrap();
    let text = back.workload.unwrap().text;
    assert!(text.contains("server_secret = \"<redacted>\""), "{text}");
    // A run an older zmqperf stored in clear is shown redacted.
    store
        .conn
        .execute(
            "UPDATE runs SET workload = ?1",
            [
                serde_json::json!({ "path": "c.toml", "text": format!("a_secret = {secret:?}") })
                    .to_string(),
            ],
        )
        .unwrap();
    let shown = store.load_run("last").unwrap().workload.unwrap().text;
    assert!(!shown.contains(secret), "{shown}");
}
