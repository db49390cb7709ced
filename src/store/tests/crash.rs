//! A writer killed in the middle of a run keeps the cases it finished.

use super::*;
use rusqlite::Connection;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set to a database path, [`crash_helper`] writes a run with two cases and kills itself.
const CRASH_ENV: &str = "ZMQPERF_STORE_TEST_CRASH_DB";
const CRASH_RUN: &str = "20261121-000000-dead";

/// The writer of [`killed_writer_keeps_finished_cases`], run in a child process.
#[cfg(unix)]
#[test]
#[ignore = "helper run by killed_writer_keeps_finished_cases in a child process"]
fn crash_helper() {
    let Some(path) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    let mut store = Store::open(&path).unwrap();
    store.begin_run(&run(CRASH_RUN)).unwrap();
    store.add_case(CRASH_RUN, &case(64, None)).unwrap();
    store.add_case(CRASH_RUN, &case(1024, None)).unwrap();
    // A third case half written: its transaction is still open when the process dies.
    let other = Connection::open(&path).unwrap();
    other
        .execute_batch(&format!(
            "BEGIN IMMEDIATE; INSERT INTO cases (run_id, position, case_id, failed, data)
             VALUES ('{CRASH_RUN}', 2, 'half', 0, '{{');"
        ))
        .unwrap();
    // SAFETY: kill(2) on our own pid; nothing runs after it.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort();
}

#[cfg(unix)]
#[test]
fn killed_writer_keeps_finished_cases() {
    let db = TempDb::new();
    std::fs::create_dir_all(&db.dir).unwrap();
    let log = db.dir.join("child.log");
    let out = std::fs::File::create(&log).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store::tests::crash::crash_helper",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CRASH_ENV, db.path())
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the writer child did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let child_log = std::fs::read_to_string(&log).unwrap_or_default();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "the writer should have been killed ({status}); its output:\n{child_log}"
        );
    }

    let store = Store::open(db.path()).unwrap();
    let loaded = store.load_run(CRASH_RUN).unwrap();
    assert_eq!(loaded.cases, [case(64, None), case(1024, None)]);
    assert_eq!(loaded.finished_at, None);
    let list = store.list_runs(None).unwrap();
    assert_eq!((list[0].cases, list[0].failed_cases), (2, 0));
    if owner::current().is_some() {
        // Linux: the writer is known to be gone.
        assert_eq!(loaded.status, "interrupted");
        assert_eq!(list[0].status, "interrupted");
    } else {
        assert_eq!(loaded.status, "running");
    }
}
