//! Writing a report (or any output a command names with `-o`) to a file: never over the
//! history database, whatever the path (the same path, a symbolic or hard link, `..`), and
//! always whole: the text goes to a temporary file in the same folder, synced, then renamed
//! into place, so a failure leaves the old file as it was and nothing half-written.

use crate::error::{Error, Result};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Device and inode of what `p` names (following links), if it exists.
fn identity(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `out` names the same file as `history`: the same device and inode (a hard
/// link, a symbolic link, another spelling of the path), or the same path once resolved.
pub fn is_same_file(out: &Path, history: &Path) -> bool {
    if let (Some(a), Some(b)) = (identity(out), identity(history)) {
        return a == b;
    }
    match (out.canonicalize(), history.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => out == history,
    }
}

/// The error for `-o` naming the history database.
pub fn names_the_history(flag: &str, out: &str) -> Error {
    Error::invalid(
        flag,
        out,
        "that is the history database (the same file, maybe through a link); writing there would destroy every run recorded in it. Name another file, e.g. -o report.html",
    )
}

/// Where the text for `out` really goes: through a symbolic link to the file it names (so
/// the link stays a link), else `out` itself.
fn resolved(out: &Path) -> PathBuf {
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => match out.canonicalize() {
            Ok(p) => p,
            // A dangling link: the file it names, created where it points.
            Err(_) => match std::fs::read_link(out) {
                Ok(t) if t.is_absolute() => t,
                Ok(t) => out.parent().unwrap_or(Path::new(".")).join(t),
                Err(_) => out.to_path_buf(),
            },
        },
        _ => out.to_path_buf(),
    }
}

/// Writes `text` to the file `out` (the value of `flag`, for messages) through a temporary
/// file in the same folder renamed into place; refuses when `out` is the history
/// `history`. An existing file keeps its permissions; a new one gets the usual ones.
pub fn write_output(flag: &str, out: &str, text: &[u8], history: Option<&Path>) -> Result<()> {
    let target = resolved(Path::new(out));
    if history.is_some_and(|h| is_same_file(&target, h)) {
        return Err(names_the_history(flag, out));
    }
    let io = |op: String| move |e: std::io::Error| Error::Io { op, source: e };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            Error::invalid(
                flag,
                out,
                "that names no file; name one, e.g. -o report.html",
            )
        })?;
    let tmp = dir.join(format!(".{name}.zmqperf-{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        if let Ok(m) = std::fs::metadata(&target) {
            f.set_permissions(m.permissions())?;
        }
        f.write_all(text)?;
        f.sync_all()?;
        // Checked again at the last moment: a link made during the run is caught too.
        if history.is_some_and(|h| is_same_file(&target, h)) {
            return Err(std::io::Error::other("it became the history database"));
        }
        std::fs::rename(&tmp, &target)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(format!("writing {out} (through {})", tmp.display()))(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    fn dir(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("zmqperf-out-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        Dir(d)
    }

    #[test]
    fn every_way_of_naming_the_history_is_refused_and_it_stays_whole() {
        let d = dir("links");
        let h = d.0.join("h.db");
        std::fs::write(&h, b"history bytes").unwrap();
        std::fs::hard_link(&h, d.0.join("hard.html")).unwrap();
        std::os::unix::fs::symlink(&h, d.0.join("soft.html")).unwrap();
        let names = [
            d.0.join("hard.html"),
            d.0.join("soft.html"),
            d.0.join("sub/../h.db"),
            h.clone(),
        ];
        for n in names {
            let n = n.to_string_lossy().into_owned();
            let e = write_output("-o", &n, b"<html>", Some(&h)).unwrap_err();
            assert_eq!(e.exit_code(), 3, "{n}: {e}");
            assert!(e.to_string().contains("history database"), "{n}: {e}");
        }
        assert_eq!(std::fs::read(&h).unwrap(), b"history bytes");
    }

    #[test]
    fn a_file_is_replaced_whole_and_a_link_stays_a_link() {
        let d = dir("whole");
        let f = d.0.join("r.html");
        std::fs::write(&f, b"old").unwrap();
        std::os::unix::fs::symlink(&f, d.0.join("link.html")).unwrap();
        let link = d.0.join("link.html").to_string_lossy().into_owned();
        write_output("-o", &link, b"new", None).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        assert!(std::fs::symlink_metadata(d.0.join("link.html"))
            .unwrap()
            .file_type()
            .is_symlink());
        // Nothing is left beside it.
        let names: Vec<_> = std::fs::read_dir(&d.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
        // A hard link to another file is not written through: its other name keeps the old
        // text, the output gets the new one.
        let other = d.0.join("other.txt");
        std::fs::write(&other, b"keep").unwrap();
        let hard = d.0.join("hard.txt");
        std::fs::hard_link(&other, &hard).unwrap();
        write_output("-o", &hard.to_string_lossy(), b"report", None).unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"keep");
        assert_eq!(std::fs::read(&hard).unwrap(), b"report");
    }
}
