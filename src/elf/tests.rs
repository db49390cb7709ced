//! Tests of the ELF reader: build ids, dynamic sections and needed versions of real and made-up files.

use super::*;
use std::process::Command;

fn me() -> std::path::PathBuf {
    std::env::current_exe().unwrap()
}

/// binutils' readelf, which CI has with gcc: the reference the parser is checked against.
fn readelf(args: &[&str], path: &Path) -> String {
    let o = Command::new("readelf")
        .args(args)
        .arg(path)
        .output()
        .expect("readelf (binutils) is needed to check the ELF parser: apt-get install binutils");
    assert!(o.status.success(), "readelf {args:?}: {o:?}");
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_build_id_is_the_one_readelf_reads() {
    let id = build_id(&me()).expect("the test binary has a GNU build-id");
    assert!(id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()));
    let notes = readelf(&["-n"], &me());
    let theirs = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("no Build ID in readelf -n: {notes}"));
    assert_eq!(id, theirs.trim());
}

#[test]
fn needed_libraries_and_versions_are_the_ones_readelf_reads() {
    let dynamic = readelf(&["-d"], &me());
    let theirs: Vec<String> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next().map(String::from))
        .collect();
    assert!(!theirs.is_empty(), "{dynamic}");
    assert_eq!(needed_libraries(&me()).unwrap(), theirs);

    let listing = readelf(&["-V"], &me());
    let needs = version_needs(&me()).unwrap();
    let mut ours: Vec<String> = needs
        .iter()
        .flat_map(|n| n.versions.iter().map(move |v| format!("{} {v}", n.file)))
        .collect();
    // readelf -V: "  0x0010: Version: 1  File: libc.so.6  Cnt: 3" then
    // "  0x0020:   Name: GLIBC_2.34  Flags: none  Version: 5".
    let mut theirs = Vec::new();
    let mut file = String::new();
    let mut inside = false;
    for l in listing.lines() {
        if l.starts_with("Version needs section") {
            inside = true;
            continue;
        }
        if l.starts_with("Version ") {
            inside = false;
        }
        if !inside {
            continue;
        }
        if let Some(f) = l.split("File: ").nth(1) {
            file = f.split_whitespace().next().unwrap().to_string();
        } else if let Some(n) = l.split("Name: ").nth(1) {
            theirs.push(format!("{file} {}", n.split_whitespace().next().unwrap()));
        }
    }
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs, "{listing}");
    let max = max_glibc(&needs).expect("a glibc build needs GLIBC_ versions");
    assert!(max >= (2, 2), "{max:?}");
}

#[test]
fn a_file_that_is_not_elf_is_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("zmqperf-elf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("not-elf");
    std::fs::write(&f, b"#!/bin/sh\necho hi\n").unwrap();
    let e = build_id(&f).unwrap_err().to_string();
    assert!(e.contains("not-elf") && e.contains("no ELF magic"), "{e}");
    let e = build_id(&dir.join("missing")).unwrap_err().to_string();
    assert!(e.contains("cannot read") && e.contains("missing"), "{e}");
    // A truncated ELF header: its tables lie outside the file.
    let exe = std::fs::read(me()).unwrap();
    std::fs::write(&f, &exe[..70]).unwrap();
    let e = build_id(&f).unwrap_err().to_string();
    assert!(e.contains("outside the file"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn glibc_versions_read_from_every_form_they_come_in() {
    assert_eq!(parse_glibc("GLIBC_2.28"), Some((2, 28)));
    assert_eq!(parse_glibc("GLIBC_2.2.5"), Some((2, 2)));
    assert_eq!(parse_glibc("GLIBC_PRIVATE"), None);
    assert_eq!(parse_glibc("GCC_3.0"), None);
    assert_eq!(parse_libc_version("glibc 2.36\n"), Some((2, 36)));
    assert_eq!(
        parse_libc_version("ldd (Debian GLIBC 2.36-9+deb12u4) 2.36\nCopyright"),
        Some((2, 36))
    );
    assert_eq!(
        parse_libc_version("ldd (GNU libc) 2.28\nCopyright (C) 2018"),
        Some((2, 28))
    );
    assert_eq!(
        parse_libc_version("ldd (Ubuntu GLIBC 2.31-0ubuntu9.9) 2.31"),
        Some((2, 31))
    );
    assert_eq!(
        parse_libc_version("musl libc (x86_64)\nVersion 1.2.3"),
        None
    );
    assert_eq!(parse_libc_version(""), None);
    let needs = vec![
        VersionNeed {
            file: "libc.so.6".into(),
            versions: vec!["GLIBC_2.2.5".into(), "GLIBC_2.34".into()],
        },
        VersionNeed {
            file: "libm.so.6".into(),
            versions: vec!["GLIBC_2.29".into(), "GLIBC_PRIVATE".into()],
        },
    ];
    assert_eq!(max_glibc(&needs), Some((2, 34)));
    assert_eq!(max_glibc(&[]), None);
}
