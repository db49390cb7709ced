//! The identity of a zmqperf executable: its GNU build-id (an ELF note the linker writes,
//! which `strip` keeps), so that every host of a run can be checked to run the same build.

use std::path::Path;
use std::sync::OnceLock;

/// The GNU build-id of an ELF file (64-bit, little-endian), as lower-case hex; None when
/// the file has none or is not such an ELF file.
pub fn of_bytes(elf: &[u8]) -> Option<String> {
    let u16_at = |o: usize| -> Option<u64> {
        Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?) as u64)
    };
    let u32_at = |o: usize| -> Option<u64> {
        Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?) as u64)
    };
    let u64_at =
        |o: usize| -> Option<u64> { Some(u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?)) };
    // ELF magic, 64-bit class, little-endian.
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let phoff = u64_at(0x20)? as usize;
    let phentsize = u16_at(0x36)? as usize;
    let phnum = u16_at(0x38)? as usize;
    const PT_NOTE: u64 = 4;
    const NT_GNU_BUILD_ID: u64 = 3;
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        if u32_at(ph)? != PT_NOTE {
            continue;
        }
        let off = u64_at(ph + 8)? as usize;
        let size = u64_at(ph + 32)? as usize;
        let mut at = off;
        let end = off.checked_add(size)?.min(elf.len());
        while at + 12 <= end {
            let namesz = u32_at(at)? as usize;
            let descsz = u32_at(at + 4)? as usize;
            let kind = u32_at(at + 8)?;
            let name = at + 12;
            let desc = name + namesz.div_ceil(4) * 4;
            if kind == NT_GNU_BUILD_ID && elf.get(name..name + namesz)? == b"GNU\0" {
                let id = elf.get(desc..desc + descsz)?;
                return Some(id.iter().map(|b| format!("{b:02x}")).collect());
            }
            at = desc + descsz.div_ceil(4) * 4;
        }
    }
    None
}

/// The GNU build-id of the executable at `path`.
pub fn of_file(path: &Path) -> Option<String> {
    of_bytes(&std::fs::read(path).ok()?)
}

/// This executable's build-id (empty when it has none), read once.
pub fn own() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| of_file(Path::new("/proc/self/exe")).unwrap_or_default())
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
        assert_eq!(of_bytes(b"not an elf file at all"), None);
        assert_eq!(of_bytes(b""), None);
        // The id survives stripping: it agrees with what `file` would print, here read
        // from a truncated copy that keeps only the headers and notes.
        let whole = std::fs::read("/proc/self/exe").unwrap();
        assert_eq!(of_bytes(&whole[..whole.len().min(1 << 20)]), Some(id));
    }
}
