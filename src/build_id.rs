//! The identity of a zmqperf executable: its GNU build-id (an ELF note the linker writes,
//! which `strip` keeps), so that every host of a run can be checked to run the same build
//! and a shipped copy is named by it. Read by [`crate::elf`].

use crate::elf;
use std::path::Path;
use std::sync::OnceLock;

/// The GNU build-id of the executable at `path` (lower-case hex); None when it has none or
/// cannot be read ([`elf::build_id`] says why).
pub fn of_file(path: &Path) -> Option<String> {
    elf::build_id(path).ok()
}

/// This executable's build-id, or why it has none, read once from /proc/self/exe.
pub fn own_build_id() -> Result<&'static str, &'static str> {
    static ID: OnceLock<Result<String, String>> = OnceLock::new();
    ID.get_or_init(|| elf::build_id(Path::new("/proc/self/exe")).map_err(|e| e.to_string()))
        .as_ref()
        .map(String::as_str)
        .map_err(String::as_str)
}

/// This executable's build-id (empty when it has none).
pub fn own() -> &'static str {
    own_build_id().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_has_a_build_id_and_other_files_none() {
        let id = of_file(Path::new("/proc/self/exe")).expect("the linker wrote a build-id");
        assert!(
            id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        assert_eq!(own(), id);
        assert_eq!(own_build_id(), Ok(id.as_str()));
        assert_eq!(of_file(Path::new("/nonexistent/zmqperf")), None);
        assert_eq!(of_file(Path::new("/proc/self/status")), None);
    }

    #[test]
    fn the_id_survives_strip() {
        let me = std::env::current_exe().unwrap();
        let copy = std::env::temp_dir().join(format!("zmqperf-strip-{}", std::process::id()));
        let o = std::process::Command::new("strip")
            .arg("-o")
            .arg(&copy)
            .arg(&me)
            .output()
            .expect("strip (binutils) is needed for this test: apt-get install binutils");
        assert!(o.status.success(), "{o:?}");
        let stripped = of_file(&copy);
        let _ = std::fs::remove_file(&copy);
        assert_eq!(stripped, of_file(&me));
    }
}
