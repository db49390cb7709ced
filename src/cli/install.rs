//! What an installation needs from the binary itself: shell completions (`zmqperf
//! completions SHELL`) and manual pages (`zmqperf man`), both generated from the same clap
//! definitions as the parser, so they can never disagree with it.

use super::Cli;
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;
use zmqperf::error::{Error, Result};

pub const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  zmqperf completions bash > ~/.local/share/bash-completion/completions/zmqperf
  # with fpath+=~/.zfunc in ~/.zshrc
  zmqperf completions zsh > ~/.zfunc/_zmqperf
  zmqperf completions fish > ~/.config/fish/completions/zmqperf.fish";

pub const MAN_EXAMPLES: &str = "\
Examples:
  zmqperf man | man -l -
  zmqperf man --dir ~/.local/share/man/man1 && man zmqperf-run";

/// The command tree as the parser has it, named and versioned as installed.
fn command() -> clap::Command {
    Cli::command().name("zmqperf").version(zmqperf::VERSION)
}

/// `zmqperf completions SHELL`: the script on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "zmqperf", &mut out);
    write_stdout(&out)
}

/// `zmqperf man`: the main page on stdout, or (with `dir`) a page per visible command.
pub fn man(dir: Option<&Path>) -> Result<()> {
    let cmd = command();
    let Some(dir) = dir else {
        let mut out = Vec::new();
        render(&cmd, &mut out)?;
        return write_stdout(&out);
    };
    std::fs::create_dir_all(dir).map_err(|e| io_err("creating", dir, e))?;
    let mut written = 0usize;
    write_page(&cmd, &dir.join("zmqperf.1"))?;
    written += 1;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("zmqperf-{}", sub.get_name());
        let page = sub.clone().name(name.clone()).version(zmqperf::VERSION);
        write_page(&page, &dir.join(format!("{name}.1")))?;
        written += 1;
    }
    eprintln!(
        "zmqperf: wrote {written} manual pages into {}",
        dir.display()
    );
    Ok(())
}

fn write_page(cmd: &clap::Command, path: &Path) -> Result<()> {
    let mut out = Vec::new();
    render(cmd, &mut out)?;
    std::fs::write(path, out).map_err(|e| io_err("writing", path, e))
}

fn render(cmd: &clap::Command, out: &mut Vec<u8>) -> Result<()> {
    clap_mangen::Man::new(cmd.clone())
        .render(out)
        .map_err(|e| Error::Io {
            op: "rendering the manual page".into(),
            source: e,
        })
}

fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(bytes)
        .and_then(|()| o.flush())
        .map_err(|e| Error::Io {
            op: "writing to stdout".into(),
            source: e,
        })
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        op: format!("{what} {}", path.display()),
        source: e,
    }
}

/// Every flag of every visible command (subcommands of subcommands included) as one
/// Markdown table: the flag, the commands that take it, and what it is (its help where
/// it first appears). Global flags are listed once.
pub fn flag_table() -> String {
    let cmd = command();
    let mut rows: Vec<(String, Vec<String>, String)> = Vec::new();
    let mut global = Vec::new();
    for a in cmd.get_arguments().filter(|a| a.is_global_set()) {
        global.push(a.get_id().to_string());
        add_flag(&mut rows, a, "every command");
    }
    let mut stack: Vec<(String, &clap::Command)> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| (s.get_name().to_string(), s))
        .collect();
    stack.reverse();
    while let Some((path, c)) = stack.pop() {
        for a in c.get_arguments() {
            if a.is_hide_set() || global.contains(&a.get_id().to_string()) {
                continue;
            }
            add_flag(&mut rows, a, &path);
        }
        let mut subs: Vec<_> = c
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| (format!("{path} {}", s.get_name()), s))
            .collect();
        subs.reverse();
        stack.extend(subs);
    }
    rows.sort_by(|a, b| a.0.trim_start_matches('-').cmp(b.0.trim_start_matches('-')));
    let mut t =
        String::from("| flag | commands | what it is (where it first appears) |\n|---|---|---|\n");
    for (flag, cmds, help) in rows {
        t.push_str(&format!(
            "| `{flag}` | {} | {} |\n",
            cmds.join(", "),
            help.replace('|', "\\|")
        ));
    }
    t
}

/// Adds `a` (a flag; positionals and `--help` are left out) as taken by `command`.
fn add_flag(rows: &mut Vec<(String, Vec<String>, String)>, a: &clap::Arg, command: &str) {
    let Some(long) = a.get_long() else { return };
    if long == "help" || long == "version" {
        return;
    }
    let flag = match a.get_short() {
        Some(s) => format!("-{s}, --{long}"),
        None => format!("--{long}"),
    };
    match rows.iter_mut().find(|r| r.0 == flag) {
        Some(r) => r.1.push(command.to_string()),
        None => {
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
            rows.push((flag, vec![command.to_string()], help));
        }
    }
}
