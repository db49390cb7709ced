//! What zmqperf reads from an ELF executable, its own or another: the GNU build-id (a build's
//! identity across hosts: the node's `hello` carries it and `ship` names the remote copy by
//! it), the shared libraries it needs (`DT_NEEDED`) and the symbol versions it needs from them
//! (`.gnu.version_r`, so "GLIBC_2.34" is known before a copy is sent to an older host).
//!
//! Read with plain file reads at the offsets the headers give (no external tool, no whole
//! 60 MB file in memory); 32- and 64-bit, either byte order.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Why an ELF file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The file is not ELF, or its headers point outside it.
    #[error("{path} is not a readable ELF file: {why}")]
    Malformed { path: String, why: String },
    /// The file has no `NT_GNU_BUILD_ID` note (linked with `--build-id=none`).
    #[error("{path} has no GNU build-id note: link it with -Wl,--build-id (scripts/build-portable.sh does)")]
    NoBuildId { path: String },
}

/// One library's symbol versions an executable needs (one `Verneed` entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionNeed {
    /// The library, as "libc.so.6".
    pub file: String,
    /// The versions needed from it, as "GLIBC_2.28".
    pub versions: Vec<String>,
}

/// The GNU build-id of the ELF file at `path`, in lower-case hex (40 digits for sha1).
pub fn build_id(path: &Path) -> Result<String, ElfError> {
    let elf = Elf::open(path)?;
    elf.build_id()?
        .map(|b| hex(&b))
        .ok_or_else(|| ElfError::NoBuildId {
            path: path.display().to_string(),
        })
}

/// The shared libraries the file needs (`DT_NEEDED`), in link order; empty for a static one.
pub fn needed_libraries(path: &Path) -> Result<Vec<String>, ElfError> {
    Elf::open(path)?.needed()
}

/// The symbol versions the file needs, library by library (`.gnu.version_r`).
pub fn version_needs(path: &Path) -> Result<Vec<VersionNeed>, ElfError> {
    Elf::open(path)?.version_needs()
}

/// The newest glibc the file needs, as (2, 34) from "GLIBC_2.34"; None when it needs no
/// versioned glibc symbol (a static build). "GLIBC_PRIVATE" and the like are not versions.
pub fn glibc_required(path: &Path) -> Result<Option<(u32, u32)>, ElfError> {
    Ok(max_glibc(&version_needs(path)?))
}

/// The newest "GLIBC_x.y" among `needs`.
pub fn max_glibc(needs: &[VersionNeed]) -> Option<(u32, u32)> {
    needs
        .iter()
        .flat_map(|n| n.versions.iter())
        .filter_map(|v| parse_glibc(v))
        .max()
}

/// (2, 28) from "GLIBC_2.28" (or "GLIBC_2.2.5": the patch level is dropped); None otherwise.
pub fn parse_glibc(version: &str) -> Option<(u32, u32)> {
    let rest = version.strip_prefix("GLIBC_")?;
    let mut parts = rest.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// (2, 36) from what `getconf GNU_LIBC_VERSION` ("glibc 2.36") or the first line of
/// `ldd --version` ("ldd (Debian GLIBC 2.36-9+deb12u4) 2.36") prints; None when neither
/// (musl's ldd, say).
pub fn parse_libc_version(text: &str) -> Option<(u32, u32)> {
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let lower = line.to_ascii_lowercase();
    if !lower.contains("glibc") && !lower.contains("gnu libc") {
        return None;
    }
    // The last word that reads as major.minor: the version, after any distribution suffix.
    line.split_whitespace().rev().find_map(|w| {
        let w = w.trim_matches(|c: char| !c.is_ascii_digit() && c != '.');
        let mut parts = w.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.split('-').next()?.parse().ok()?;
        Some((major, minor))
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const PT_NOTE: u32 = 4;
const SHT_NOTE: u32 = 7;
const SHT_DYNAMIC: u32 = 6;
const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;
const NT_GNU_BUILD_ID: u32 = 3;
const DT_NEEDED: u64 = 1;
/// No header or table read here is larger than this; a bigger size is a damaged file.
const MAX_TABLE: u64 = 64 << 20;

/// An open ELF file and what its identification says about its layout.
struct Elf {
    file: File,
    path: String,
    wide: bool,
    big: bool,
    len: u64,
}

/// A section header, the fields used here.
struct Section {
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
}

impl Elf {
    fn open(path: &Path) -> Result<Elf, ElfError> {
        let io = |source| ElfError::Io {
            path: path.display().to_string(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut elf = Elf {
            file,
            path: path.display().to_string(),
            wide: false,
            big: false,
            len,
        };
        let ident = elf.read(0, 16)?;
        if ident[..4] != *b"\x7fELF" {
            return Err(elf.bad("no ELF magic"));
        }
        elf.wide = match ident[4] {
            1 => false,
            2 => true,
            c => return Err(elf.bad(&format!("unknown class {c}"))),
        };
        elf.big = match ident[5] {
            1 => false,
            2 => true,
            d => return Err(elf.bad(&format!("unknown data encoding {d}"))),
        };
        Ok(elf)
    }

    fn bad(&self, why: &str) -> ElfError {
        ElfError::Malformed {
            path: self.path.clone(),
            why: why.to_string(),
        }
    }

    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, ElfError> {
        if len > MAX_TABLE || offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(self.bad(&format!(
                "{len} bytes at offset {offset} lie outside the file ({} bytes)",
                self.len
            )));
        }
        let mut buf = vec![0u8; len as usize];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(|source| ElfError::Io {
                path: self.path.clone(),
                source,
            })?;
        Ok(buf)
    }

    fn u16(&self, b: &[u8], at: usize) -> u16 {
        let a = [b[at], b[at + 1]];
        if self.big {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        }
    }

    fn u32(&self, b: &[u8], at: usize) -> u32 {
        let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }

    fn u64(&self, b: &[u8], at: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        if self.big {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        }
    }

    /// A word: 8 bytes in ELF64, 4 in ELF32.
    fn word(&self, b: &[u8], at: usize) -> u64 {
        if self.wide {
            self.u64(b, at)
        } else {
            u64::from(self.u32(b, at))
        }
    }

    /// The ELF header's table locations: (phoff, phentsize, phnum, shoff, shentsize, shnum).
    fn header(&self) -> Result<(u64, u64, u64, u64, u64, u64), ElfError> {
        let h = self.read(0, if self.wide { 64 } else { 52 })?;
        Ok(if self.wide {
            (
                self.u64(&h, 32),
                u64::from(self.u16(&h, 54)),
                u64::from(self.u16(&h, 56)),
                self.u64(&h, 40),
                u64::from(self.u16(&h, 58)),
                u64::from(self.u16(&h, 60)),
            )
        } else {
            (
                u64::from(self.u32(&h, 28)),
                u64::from(self.u16(&h, 42)),
                u64::from(self.u16(&h, 44)),
                u64::from(self.u32(&h, 32)),
                u64::from(self.u16(&h, 46)),
                u64::from(self.u16(&h, 48)),
            )
        })
    }

    /// The note segments (PT_NOTE): (offset, size, alignment).
    fn note_segments(&self) -> Result<Vec<(u64, u64, u64)>, ElfError> {
        let (phoff, phentsize, phnum, ..) = self.header()?;
        if phnum == 0 {
            return Ok(Vec::new());
        }
        let min = if self.wide { 56 } else { 32 };
        if phentsize < min {
            return Err(self.bad("program header entries too small"));
        }
        let table = self.read(phoff, phentsize * phnum)?;
        let mut out = Vec::new();
        for i in 0..phnum as usize {
            let e = &table[i * phentsize as usize..];
            if self.u32(e, 0) != PT_NOTE {
                continue;
            }
            out.push(if self.wide {
                (self.u64(e, 8), self.u64(e, 32), self.u64(e, 48))
            } else {
                (
                    u64::from(self.u32(e, 4)),
                    u64::from(self.u32(e, 16)),
                    u64::from(self.u32(e, 28)),
                )
            });
        }
        Ok(out)
    }

    fn sections(&self) -> Result<Vec<Section>, ElfError> {
        let (.., shoff, shentsize, shnum) = self.header()?;
        if shoff == 0 || shnum == 0 {
            return Ok(Vec::new());
        }
        let min = if self.wide { 64 } else { 40 };
        if shentsize < min {
            return Err(self.bad("section header entries too small"));
        }
        let table = self.read(shoff, shentsize * shnum)?;
        Ok((0..shnum as usize)
            .map(|i| {
                let e = &table[i * shentsize as usize..];
                if self.wide {
                    Section {
                        kind: self.u32(e, 4),
                        offset: self.u64(e, 24),
                        size: self.u64(e, 32),
                        link: self.u32(e, 40),
                    }
                } else {
                    Section {
                        kind: self.u32(e, 4),
                        offset: u64::from(self.u32(e, 16)),
                        size: u64::from(self.u32(e, 20)),
                        link: self.u32(e, 24),
                    }
                }
            })
            .collect())
    }

    /// The build-id from the note segments, else from the note sections (an object file).
    fn build_id(&self) -> Result<Option<Vec<u8>>, ElfError> {
        for (offset, size, align) in self.note_segments()? {
            if let Some(id) = self.find_build_id(&self.read(offset, size)?, align) {
                return Ok(Some(id));
            }
        }
        for s in self.sections()? {
            if s.kind == SHT_NOTE {
                if let Some(id) = self.find_build_id(&self.read(s.offset, s.size)?, 4) {
                    return Ok(Some(id));
                }
            }
        }
        Ok(None)
    }

    /// Walks notes (namesz, descsz, type, name, desc; name and desc padded to the alignment,
    /// 4 or 8) for the "GNU" note of type NT_GNU_BUILD_ID.
    fn find_build_id(&self, notes: &[u8], align: u64) -> Option<Vec<u8>> {
        let align = if align == 8 { 8 } else { 4 };
        let pad = |n: usize| n.div_ceil(align) * align;
        let mut at = 0usize;
        while at + 12 <= notes.len() {
            let namesz = self.u32(notes, at) as usize;
            let descsz = self.u32(notes, at + 4) as usize;
            let kind = self.u32(notes, at + 8);
            let name_at = at + 12;
            let desc_at = name_at.checked_add(pad(namesz))?;
            let end = desc_at.checked_add(pad(descsz))?;
            if desc_at + descsz > notes.len() {
                return None;
            }
            if kind == NT_GNU_BUILD_ID && &notes[name_at..name_at + namesz] == b"GNU\0" {
                return Some(notes[desc_at..desc_at + descsz].to_vec());
            }
            at = end;
        }
        None
    }

    /// A string table section's bytes, by section index.
    fn strings(&self, sections: &[Section], index: u32) -> Result<Vec<u8>, ElfError> {
        let s = sections
            .get(index as usize)
            .ok_or_else(|| self.bad("a section links to a string table that does not exist"))?;
        self.read(s.offset, s.size)
    }

    fn string_at(&self, table: &[u8], at: u64) -> Result<String, ElfError> {
        let rest = table
            .get(at as usize..)
            .ok_or_else(|| self.bad("a name lies outside its string table"))?;
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }

    fn needed(&self) -> Result<Vec<String>, ElfError> {
        let sections = self.sections()?;
        let mut out = Vec::new();
        for s in sections.iter().filter(|s| s.kind == SHT_DYNAMIC) {
            let strings = self.strings(&sections, s.link)?;
            let table = self.read(s.offset, s.size)?;
            let entry = if self.wide { 16 } else { 8 };
            for e in table.chunks_exact(entry) {
                let tag = self.word(e, 0);
                if tag == 0 {
                    break;
                }
                if tag == DT_NEEDED {
                    out.push(self.string_at(&strings, self.word(e, entry / 2))?);
                }
            }
        }
        Ok(out)
    }

    fn version_needs(&self) -> Result<Vec<VersionNeed>, ElfError> {
        let sections = self.sections()?;
        let mut out = Vec::new();
        for s in sections.iter().filter(|s| s.kind == SHT_GNU_VERNEED) {
            let strings = self.strings(&sections, s.link)?;
            let table = self.read(s.offset, s.size)?;
            let short = || self.bad("truncated .gnu.version_r");
            // Verneed: version u16, cnt u16, file u32, aux u32, next u32 (16 bytes);
            // Vernaux: hash u32, flags u16, other u16, name u32, next u32 (16 bytes).
            let mut at = 0usize;
            loop {
                let v = table.get(at..at + 16).ok_or_else(short)?;
                let count = self.u16(v, 2);
                let file = self.string_at(&strings, u64::from(self.u32(v, 4)))?;
                let mut versions = Vec::new();
                let mut aux = at + self.u32(v, 8) as usize;
                for _ in 0..count {
                    let a = table.get(aux..aux + 16).ok_or_else(short)?;
                    versions.push(self.string_at(&strings, u64::from(self.u32(a, 8)))?);
                    let next = self.u32(a, 12) as usize;
                    if next == 0 {
                        break;
                    }
                    aux += next;
                }
                out.push(VersionNeed { file, versions });
                let next = self.u32(v, 12) as usize;
                if next == 0 {
                    break;
                }
                at += next;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
