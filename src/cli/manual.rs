//! `trajan completions SHELL` and `trajan man`: generated from the clap definitions, so they
//! name exactly the commands and flags the binary has.

use super::Cli;
use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::Man;
use std::fmt::Write as _;

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "trajan", &mut out);
    out
}

/// The manual page, trajan(1), as roff: the top-level options, then a COMMANDS section with
/// each command's synopsis, description and options (one page for the whole tool, so `man
/// trajan` answers everything; the flags every command accepts are listed once, at the top).
pub fn man() -> Result<String> {
    let mut root = Cli::command().disable_help_subcommand(true).bin_name("trajan");
    root.build();
    let page = Man::new(root.clone());
    // Every part clap_mangen renders starts with the same preamble (it defines a string for
    // apostrophes); the page keeps one, right after the title line.
    let (preamble, title) = split_title(&render(|w| page.render_title(w))?);
    let mut out = title;
    out.push_str(&preamble);
    out.push_str(&strip_preamble(&render(|w| page.render_name_section(w))?));
    out.push_str(&strip_preamble(&render(|w| page.render_synopsis_section(w))?));
    out.push_str(&strip_preamble(&render(|w| page.render_description_section(w))?));
    out.push_str(&strip_preamble(&render(|w| page.render_options_section(w))?));
    out.push_str(".SH COMMANDS\n");
    for sub in visible(&root) {
        command_section(&mut out, sub)?;
    }
    out.push_str(&strip_preamble(&render(|w| page.render_version_section(w))?));
    Ok(out)
}

/// One `.SS` subsection per command (nested commands after their parent): synopsis,
/// description, and its own options (not the global ones, nor `--help`).
fn command_section(out: &mut String, cmd: &clap::Command) -> Result<()> {
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let _ = writeln!(out, ".SS \"{}\"", name.replace('"', ""));
    let own = cmd.clone().mut_args(|a| if a.is_global_set() || a.get_id() == "help" { a.hide(true) } else { a });
    let man = Man::new(own);
    out.push_str(&section_body(&render(|w| man.render_synopsis_section(w))?));
    let description = section_body(&render(|w| man.render_description_section(w))?);
    if !description.is_empty() {
        out.push_str(".PP\n");
        out.push_str(&description);
    }
    out.push_str(&section_body(&render(|w| man.render_options_section(w))?));
    for sub in visible(cmd) {
        command_section(out, sub)?;
    }
    Ok(())
}

fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

fn render(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Result<String> {
    let mut buf = Vec::new();
    f(&mut buf)?;
    Ok(String::from_utf8(buf)?)
}

/// The roff control lines clap_mangen puts before each part it renders.
fn is_preamble(line: &str) -> bool {
    line.starts_with(".ie ") || line.starts_with(".el ")
}

fn strip_preamble(text: &str) -> String {
    text.lines().skip_while(|l| is_preamble(l)).map(|l| format!("{l}\n")).collect()
}

/// (the preamble, the rest) of the rendered title.
fn split_title(text: &str) -> (String, String) {
    let preamble: String = text.lines().take_while(|l| is_preamble(l)).map(|l| format!("{l}\n")).collect();
    (preamble, strip_preamble(text))
}

/// A rendered section without its preamble and `.SH` heading: what goes under a `.SS`.
fn section_body(text: &str) -> String {
    let mut lines = text.lines().skip_while(|l| is_preamble(l));
    match lines.next() {
        Some(heading) if heading.starts_with(".SH") => lines.map(|l| format!("{l}\n")).collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_one_title_one_preamble_and_every_command() {
        let page = man().unwrap_or_else(|e| panic!("{e}"));
        assert!(page.starts_with(".TH trajan 1"), "{}", &page[..page.len().min(200)]);
        assert_eq!(page.matches(".TH ").count(), 1);
        assert_eq!(page.lines().filter(|l| l.starts_with(".ie ")).count(), 1, "one preamble");
        for name in ["ingest", "runs", "show", "export", "completions", "man", "bench gen"] {
            assert!(page.contains(&format!(".SS \"trajan {name}\"")), "no section for {name}");
        }
        assert!(!page.contains("trajan-ingest(1)"), "the page refers to pages that are not installed");
    }
}
