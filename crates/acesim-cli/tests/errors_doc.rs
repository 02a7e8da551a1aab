//! docs/errors.md shows real runs: every example is run again here and must give the exit
//! code shown and contain every line of output shown (an added line, such as a source
//! snippet under a message, is fine; a changed or missing one is not).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files an example uses without showing them.
fn hidden_file(name: &str) -> Option<&'static [u8]> {
    match name {
        "r.sched" => Some(b"ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n"),
        "bin.sched" => Some(b"ranks 2\nrank \xff\xfe\n"),
        _ => None,
    }
}

struct Example {
    files: Vec<(String, String)>,
    command: String,
    output: Vec<String>,
    code: i32,
}

/// The ```text blocks that run acesim.
fn examples(doc: &str) -> Vec<Example> {
    let mut out = Vec::new();
    for block in doc.split("```text\n").skip(1) {
        let block = block.split("\n```").next().unwrap_or("");
        let mut ex = Example {
            files: Vec::new(),
            command: String::new(),
            output: Vec::new(),
            code: -1,
        };
        let mut file: Option<(String, String)> = None;
        for line in block.lines() {
            if let Some(name) = line.strip_prefix("$ cat ") {
                ex.files.extend(file.take());
                file = Some((name.to_string(), String::new()));
            } else if let Some(cmd) = line.strip_prefix("$ ") {
                ex.files.extend(file.take());
                ex.command = cmd.to_string();
            } else if let Some(code) = line
                .strip_prefix("[exit ")
                .and_then(|c| c.strip_suffix(']'))
            {
                ex.code = code.parse().unwrap();
            } else if let Some((_, text)) = &mut file {
                text.push_str(line);
                text.push('\n');
            } else if !ex.command.is_empty() && !line.is_empty() {
                ex.output.push(line.to_string());
            }
        }
        if ex.command.starts_with("acesim ") {
            out.push(ex);
        }
    }
    out
}

/// Splits a command line on spaces, with '...' quoting.
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in cmd.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn every_example_in_errors_md_is_what_acesim_prints() {
    let doc = std::fs::read_to_string(repo().join("docs/errors.md")).unwrap();
    let examples = examples(&doc);
    assert!(examples.len() >= 40, "{} examples", examples.len());
    let has_python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut checked = 0;
    for ex in &examples {
        let args = words(&ex.command);
        let shown = ex.output.join("\n");
        // Output that depends on this machine: the Python installation, the C compiler.
        if shown.contains("No module named acesim")
            || (args.iter().any(|a| a.ends_with(".py")) && !has_python)
            || (shown.contains("the C compiler") && std::env::var_os("CC").is_some())
        {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in &ex.files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        for a in &args {
            if let Some(bytes) = hidden_file(a) {
                if !ex.files.iter().any(|(n, _)| n == a) {
                    std::fs::write(dir.path().join(a), bytes).unwrap();
                }
            }
        }
        let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
            .args(&args[1..])
            .current_dir(dir.path())
            .env("PYTHONPATH", repo().join("python"))
            .output()
            .unwrap();
        let got = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            o.status.code(),
            Some(ex.code),
            "`{}`: docs/errors.md shows exit {}, got:\n{got}",
            ex.command,
            ex.code
        );
        // A Python traceback or a compiler's message depends on their versions: only the
        // first line is acesim's. The wall time of a run varies.
        let lines = if shown.contains("Traceback") || shown.contains("the C compiler") {
            &ex.output[..1]
        } else {
            &ex.output[..]
        };
        for line in lines {
            let stable = line.split(" wall: ").next().unwrap_or(line);
            assert!(
                got.contains(stable),
                "`{}`: docs/errors.md shows\n  {line}\nbut acesim printed:\n{got}",
                ex.command
            );
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} examples checked");
}
