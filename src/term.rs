//! The width that text output is laid out for: `--width N`, else `COLUMNS`, else the
//! terminal's own width, else 120 (files and pipes). Tables fit it by their own rules; any
//! other line longer than it is wrapped between words by [`fit`] (not in files and pipes
//! without a width asked for).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The width when nothing says otherwise (standard output is a file or a pipe).
pub const DEFAULT: usize = 120;
/// The narrowest layout: narrower asks are raised to it.
pub const NARROWEST: usize = 40;

/// 0 until set: the width asked for with `--width`.
static ASKED: AtomicUsize = AtomicUsize::new(0);

/// Sets the width from `--width` (None: from the environment and the terminal).
pub fn set_width(asked: Option<usize>) {
    ASKED.store(asked.unwrap_or(0), Ordering::Relaxed);
}

/// Where the width came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--width`.
    Flag,
    /// The `COLUMNS` variable.
    Columns,
    /// The terminal the text goes to (standard output, or for errors standard error).
    Terminal,
    /// None of them: [`DEFAULT`].
    Default,
}

/// The width in force and where it came from.
/// The width of standard output's text (its own terminal, not standard error's: a report
/// sent to a file keeps the file layout).
pub fn resolved() -> (usize, Source) {
    resolved_on(1)
}

/// The width in force for text on file descriptor `fd` (1 or 2).
fn resolved_on(fd: i32) -> (usize, Source) {
    // The library's own tests lay out for files, whatever terminal runs them.
    if cfg!(test) {
        return resolve(ASKED.load(Ordering::Relaxed), None, || None);
    }
    resolve(
        ASKED.load(Ordering::Relaxed),
        std::env::var("COLUMNS").ok().as_deref(),
        || terminal_width(fd),
    )
}

/// The width from the flag (0: none), the `COLUMNS` variable and the terminal, in that
/// order of precedence.
fn resolve(
    asked: usize,
    columns: Option<&str>,
    terminal: impl FnOnce() -> Option<usize>,
) -> (usize, Source) {
    if asked > 0 {
        return (asked.max(NARROWEST), Source::Flag);
    }
    if let Some(n) = columns
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return (n.max(NARROWEST), Source::Columns);
    }
    if let Some(n) = terminal() {
        return (n.max(NARROWEST), Source::Terminal);
    }
    (DEFAULT, Source::Default)
}

/// The width text output is laid out for.
pub fn width() -> usize {
    resolved().0
}

/// The width of the terminal on file descriptor `fd`, if it is one.
fn terminal_width(fd: i32) -> Option<usize> {
    // SAFETY: isatty and ioctl(TIOCGWINSZ) only read the descriptor's state into `ws`.
    unsafe {
        if libc::isatty(fd) != 1 {
            return None;
        }
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) != 0 || ws.ws_col == 0 {
            return None;
        }
        Some(ws.ws_col as usize)
    }
}

/// Prints a line on standard error, fitted to the width ([`fit`]).
pub fn to_stderr(line: &str) {
    eprintln!("{}", fit_err(line));
}

/// Prints a line on standard output, fitted to the width ([`fit`]).
pub fn to_stdout(line: &str) {
    println!("{}", fit(line));
}

/// `eprintln!` for human text: the line fitted to the width ([`fit`]).
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => {
        $crate::term::to_stderr(&format!($($t)*))
    };
}

/// `println!` for human text: the line fitted to the width ([`fit`]).
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::term::to_stdout(&format!($($t)*))
    };
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `text` with every line longer than [`width`] wrapped between words ([`fit_to`]), when a
/// width was asked for or found (a flag, `COLUMNS`, a terminal); files and pipes get the
/// lines as they are, for the scripts that read them.
pub fn fit(text: &str) -> String {
    fit_on(1, text)
}

/// [`fit`] for standard error: the width of its terminal, if it is one.
pub fn fit_err(text: &str) -> String {
    fit_on(2, text)
}

/// The width of the text on standard error (for a status line cut to it).
pub fn width_err() -> usize {
    resolved_on(2).0
}

fn fit_on(fd: i32, text: &str) -> String {
    match resolved_on(fd) {
        (_, Source::Default) => text.to_string(),
        (w, _) => fit_to(text, w),
    }
}

/// `text` with every line longer than `width` wrapped between words. The continuation
/// lines hang under the line's text: past its indent, its list mark (`- `, `* `, `3. `,
/// `[warning] `) or its label column (a label then two or more spaces, as `command   ...`).
/// A word longer than a line is cut after a `/`, `,` or `=` where it can be, else where it
/// must, so that no line is longer than `width`.
pub fn fit_to(text: &str, width: usize) -> String {
    let width = width.max(NARROWEST);
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if chars(line) <= width {
            out.push_str(line);
        } else {
            wrap_line(&mut out, line, width);
        }
    }
    out
}

/// How far continuation lines of `line` are indented.
fn hang(line: &str) -> usize {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let mark = list_mark(rest).or_else(|| label_column(rest)).unwrap_or(0);
    indent + mark
}

/// The width of a list mark at the start of `s`, with its space.
fn list_mark(s: &str) -> Option<usize> {
    if s.starts_with("- ") || s.starts_with("* ") {
        return Some(2);
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && s[digits..].starts_with(". ") {
        return Some(digits + 2);
    }
    if s.starts_with('[') {
        let end = s.find("] ")?;
        if end < 16 && !s[1..end].contains(' ') {
            return Some(end + 2);
        }
    }
    None
}

/// The column where the value of a `label   value` line starts (a short label, then two
/// or more spaces), or of a `Label: value` line whose label is a few words.
fn label_column(s: &str) -> Option<usize> {
    let gap = s.find("  ")?;
    if gap == 0 || gap > 24 {
        return None;
    }
    let after = s[gap..].len() - s[gap..].trim_start_matches(' ').len();
    Some(chars(&s[..gap]) + after)
}

fn wrap_line(out: &mut String, line: &str, width: usize) {
    let mut hang = hang(line);
    if hang > width / 2 {
        hang = 2.min(width / 4);
    }
    let lead = line.len() - line.trim_start_matches(' ').len();
    let pad = " ".repeat(hang);
    let mut cur = line[..lead].to_string();
    // On the first line the words keep their spacing (a label's column); after a break,
    // one space.
    let mut first = true;
    let mut empty = true;
    let mut rest = &line[lead..];
    let mut pieces = Vec::new();
    while !rest.is_empty() {
        let gap_len = rest.len() - rest.trim_start_matches(' ').len();
        let gap = &rest[..gap_len];
        rest = &rest[gap_len..];
        let word_len = rest.find(' ').unwrap_or(rest.len());
        let word = &rest[..word_len];
        rest = &rest[word_len..];
        if word.is_empty() {
            break;
        }
        let room = width - hang;
        if chars(word) > room {
            cut_word(word, room, &mut pieces);
        } else {
            pieces.push(word.to_string());
        }
        for (k, piece) in pieces.drain(..).enumerate() {
            let sep = if empty {
                ""
            } else if first && k == 0 {
                gap
            } else {
                " "
            };
            if !empty && chars(&cur) + chars(sep) + chars(&piece) > width {
                out.push_str(&cur);
                out.push('\n');
                cur = pad.clone();
                first = false;
                empty = true;
            }
            if empty && chars(&cur) + chars(&piece) > width {
                // A first word that does not fit after the indent starts at the hang.
                cur = pad.clone();
            }
            if !empty {
                cur.push_str(if first && k == 0 { gap } else { " " });
            }
            cur.push_str(&piece);
            empty = false;
        }
    }
    out.push_str(&cur);
}

/// `word` in pieces of at most `room` characters, cut after a `/`, `,`, `&` or `=` where
/// one falls in the second half of a piece.
fn cut_word(word: &str, room: usize, pieces: &mut Vec<String>) {
    let room = room.max(8);
    let mut rest: Vec<char> = word.chars().collect();
    while rest.len() > room {
        let at = (room / 2..room)
            .rev()
            .find(|&i| matches!(rest[i - 1], '/' | ',' | '&' | '='))
            .unwrap_or(room);
        pieces.push(rest[..at].iter().collect());
        rest.drain(..at);
    }
    pieces.push(rest.into_iter().collect());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn longest(s: &str) -> usize {
        s.lines().map(chars).max().unwrap_or(0)
    }

    #[test]
    fn short_lines_are_left_as_they_are() {
        let t = "a  b\n\n  c\n";
        assert_eq!(fit_to(t, 80), t);
    }

    #[test]
    fn prose_wraps_between_words_under_its_mark_or_label() {
        let words = "lost messages at the end of the stream ".repeat(4);
        let t = format!("- cause: {words}\n  1. fix: {words}\ncommand   {words}\n");
        let f = fit_to(&t, 40);
        assert!(longest(&f) <= 40, "{f}");
        let lines: Vec<&str> = f.lines().collect();
        assert!(lines[0].starts_with("- cause: lost"));
        assert!(
            lines[1].starts_with("  ") && !lines[1].starts_with("   "),
            "{f}"
        );
        assert!(f.contains("\n  1. fix:"), "{f}");
        assert!(f.contains("\n     "), "hangs under the numbered item: {f}");
        assert!(f.contains("\ncommand   "), "{f}");
        assert!(
            f.contains("\n          "),
            "hangs under the label's value: {f}"
        );
        // Words are never cut: the same words, in order.
        let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(norm(&f), norm(&t));
    }

    #[test]
    fn a_word_longer_than_a_line_is_cut_after_a_slash() {
        let path = "/very/long/path/to/some/folder/with/a/history/database/file.db";
        let f = fit_to(&format!("history in {path} now"), 40);
        assert!(longest(&f) <= 40, "{f}");
        assert_eq!(f.replace(['\n', ' '], ""), format!("historyin{path}now"));
        assert!(f.lines().nth(1).unwrap().trim_end().ends_with('/'), "{f}");
    }

    #[test]
    fn numbers_stay_whole() {
        let t = format!("{} 1,234,567.89 msg/s", "x".repeat(75));
        let f = fit_to(&t, 80);
        assert!(f.ends_with("\n1,234,567.89 msg/s"), "{f}");
    }

    #[test]
    fn the_flag_comes_first_then_columns_then_the_terminal() {
        let tty = || Some(132);
        assert_eq!(resolve(10, Some("90"), tty), (NARROWEST, Source::Flag));
        assert_eq!(resolve(100, Some("90"), tty), (100, Source::Flag));
        assert_eq!(resolve(0, Some("90"), tty), (90, Source::Columns));
        assert_eq!(resolve(0, Some("wide"), tty), (132, Source::Terminal));
        assert_eq!(resolve(0, None, || None), (DEFAULT, Source::Default));
    }
}
