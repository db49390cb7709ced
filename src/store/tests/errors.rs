//! The errors a user sees opening or writing a history, each naming the file and the fix.

use super::*;
use rusqlite::Connection;

#[test]
fn open_errors_name_the_file_and_the_fix() {
    let db = TempDb::new();
    std::fs::create_dir_all(&db.dir).unwrap();

    // Not an SQLite file.
    let junk = db.dir.join("junk.db");
    std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
    let e = Store::open(&junk).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains(&junk.display().to_string()), "{msg}");
    assert!(msg.contains("not an SQLite database"), "{msg}");
    assert!(msg.contains("--db PATH or set ZMQPERF_DB"), "{msg}");
    assert_eq!(e.exit_code(), 13);

    // Another program's SQLite database.
    let foreign = db.dir.join("foreign.db");
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = Store::open(&foreign).unwrap_err();
    assert!(e.to_string().contains("not a zmqperf history"), "{e}");

    // A newer layout.
    let newer = db.dir.join("newer.db");
    drop(Store::open(&newer).unwrap());
    Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let e = Store::open(&newer).unwrap_err();
    assert!(matches!(e, StoreError::TooNew { found: 99, .. }), "{e:?}");
    assert!(e.to_string().contains("upgrade zmqperf"), "{e}");

    // A folder that cannot be created (its parent is a file).
    let e = Store::open(junk.join("sub").join("h.db")).unwrap_err();
    assert!(e.to_string().contains("cannot create folder"), "{e}");

    // open_existing does not create.
    let absent = db.dir.join("absent.db");
    let e = Store::open_existing(&absent).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e:?}");
    assert!(!absent.exists());

    // Nested folders are created, and a second open of the same file works.
    let nested = db.dir.join("a").join("b").join("h.db");
    drop(Store::open(&nested).unwrap());
    assert!(Store::open_existing(&nested).is_ok());
}

#[test]
fn write_errors() {
    let db = TempDb::new();
    let mut store = store_with(&db, &["r1"]);
    let e = store.begin_run(&run("r1")).unwrap_err();
    assert!(matches!(e, StoreError::DuplicateRun { .. }), "{e:?}");
    assert!(e.to_string().contains("run r1 is already"), "{e}");

    let e = store.add_case("r9", &case(64, None)).unwrap_err();
    assert!(e.to_string().contains("'r9'"), "{e}");
    let e = store.finish_run("r9", "complete", None).unwrap_err();
    assert!(e.to_string().contains("'r9'"), "{e}");
    let e = store.finish_run("r1", "done", None).unwrap_err();
    assert!(e.to_string().contains("'done'"), "{e}");

    // A figure JSON cannot hold is refused before anything is written.
    let mut nan = case(64, None);
    nan.wall_s = f64::NAN;
    let e = store.add_case("r1", &nan).unwrap_err();
    assert!(matches!(e, StoreError::Encode { .. }), "{e:?}");
    assert!(e.to_string().contains("latency/reqrep/tcp/64"), "{e}");
    assert_eq!(store.load_run("r1").unwrap().cases.len(), 1);
}

#[test]
fn each_sqlite_failure_has_its_own_meaning_and_fix() {
    let said = |code: i32| {
        let e = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None);
        StoreError::sqlite(std::path::Path::new("h.db"), "recording case x", e).to_string()
    };
    let cases = [
        (rusqlite::ffi::SQLITE_FULL, "the disk holding it is full"),
        (
            rusqlite::ffi::SQLITE_BUSY,
            "another process held the database locked",
        ),
        (
            rusqlite::ffi::SQLITE_LOCKED,
            "another process held the database locked",
        ),
        (rusqlite::ffi::SQLITE_READONLY, "the file is not writable"),
        (rusqlite::ffi::SQLITE_CORRUPT, "the file is damaged"),
        (rusqlite::ffi::SQLITE_NOTADB, "the file is damaged"),
        (
            rusqlite::ffi::SQLITE_IOERR,
            "the disk reported an I/O error",
        ),
        (rusqlite::ffi::SQLITE_CANTOPEN, "cannot be opened any more"),
    ];
    for (code, words) in cases {
        let m = said(code);
        assert!(m.contains(words), "{code}: {m}");
        // Only a lock is a lock.
        let busy = code == rusqlite::ffi::SQLITE_BUSY || code == rusqlite::ffi::SQLITE_LOCKED;
        assert_eq!(m.contains("locked"), busy, "{code}: {m}");
    }
}
