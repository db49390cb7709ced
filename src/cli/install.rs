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
  zmqperf completions zsh > ~/.zfunc/_zmqperf      # with fpath+=~/.zfunc in ~/.zshrc
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
