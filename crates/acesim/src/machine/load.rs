//! Loading a machine: a TOML file or a preset, `--set` overrides applied to its text, serde
//! for the types and `validate` for the rest; every error points at the line (or the
//! `--set`) it comes from.

use crate::error::{did_you_mean, Error, Location, Result};
use crate::machine::config::{MachineConfig, PRESETS};
use crate::machine::loaded::Machine;
use crate::machine::validate::validate;

/// Where a config came from, kept to point errors at the right line.
#[derive(Debug, Clone)]
pub struct MachineSource {
    /// File path or `preset NAME`.
    pub name: String,
    pub text: String,
    /// `--set` overrides applied on top, as given.
    pub overrides: Vec<String>,
}

impl MachineSource {
    /// Reads a machine file, or a preset when `spec` names one and is not a file.
    pub fn open(spec: &str) -> Result<Self> {
        if let Some((name, text)) = PRESETS.iter().find(|(n, _)| *n == spec) {
            if !std::path::Path::new(spec).exists() {
                return Ok(MachineSource {
                    name: format!("preset {name}"),
                    text: (*text).to_string(),
                    overrides: vec![],
                });
            }
        }
        let text = std::fs::read_to_string(spec).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
                Error::input(
                    Location::file(spec),
                    format!(
                        "no such machine file, and not a preset (presets: {})",
                        names.join(", ")
                    ),
                )
            } else {
                Error::io(spec, e)
            }
        })?;
        Ok(MachineSource {
            name: spec.to_string(),
            text,
            overrides: vec![],
        })
    }

    pub fn from_text(name: impl Into<String>, text: impl Into<String>) -> Self {
        MachineSource {
            name: name.into(),
            text: text.into(),
            overrides: vec![],
        }
    }

    pub fn with_overrides(mut self, overrides: &[String]) -> Self {
        self.overrides.extend(overrides.iter().cloned());
        self
    }

    /// Parses the text, applies the overrides, checks every field and reads its words.
    pub fn load(&self) -> Result<Machine> {
        let base: MachineConfig = parse_toml(&self.name, &self.text)?;
        let mut config = base;
        let mut text = self.text.clone();
        for ov in &self.overrides {
            text = apply_override(&text, ov)?;
            config = toml::from_str(&text).map_err(|e| {
                Error::input(
                    Location::file("command line").with_field(override_key(ov)),
                    format!(
                        "--set {ov}: {}",
                        explain_serde_message(e.message(), override_key(ov))
                    ),
                )
            })?;
        }
        self.resolve_graph_file(&mut config);
        let mut machine = validate(config, |field| self.locate(&text, field))?;
        machine.name = crate::machine::loaded::MachineName(self.name.clone());
        Ok(machine)
    }

    /// A graph file named by a relative path in a machine file is beside that file (so the
    /// machine works from any folder); given by `--set` or in a preset, it is relative to
    /// the working folder.
    fn resolve_graph_file(&self, config: &mut MachineConfig) {
        let Some(file) = &config.topology.file else {
            return;
        };
        let machine_file = std::path::Path::new(&self.name);
        let from_set = self
            .overrides
            .iter()
            .any(|o| override_key(o) == "topology.file");
        if std::path::Path::new(file).is_relative() && !from_set && machine_file.is_file() {
            if let Some(dir) = machine_file.parent() {
                config.topology.file = Some(dir.join(file).to_string_lossy().into_owned());
            }
        }
    }

    /// Location of a dotted field: the `--set` that changed it, or its place in the file.
    fn locate(&self, text: &str, field: &str) -> Location {
        if self.overrides.iter().any(|o| override_key(o) == field) {
            return Location::file("command line").with_field(field);
        }
        let loc = Location::file(&self.name).with_field(field);
        if let Ok(doc) = toml_edit::ImDocument::parse(text) {
            let mut item: Option<&toml_edit::Item> = None;
            for (i, part) in field.split('.').enumerate() {
                item = if i == 0 {
                    doc.get(part)
                } else {
                    item.and_then(|it| it.get(part))
                };
            }
            if let Some(span) = item.and_then(|it| it.span()) {
                let at = Location::in_text(&self.name, text, span.start, span.len());
                return Location {
                    field: Some(field.to_string()),
                    ..at
                };
            }
        }
        loc
    }
}

fn parse_toml<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let (loc, key) = match e.span() {
            Some(span) => {
                // The key of `key = value` on the line where the value is.
                let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
                let before = text.get(line_start..span.start).unwrap_or("");
                let key = before.split('=').next().unwrap_or("").trim();
                (Location::in_text(name, text, span.start, span.len()), key)
            }
            None => (Location::file(name), ""),
        };
        Error::input(loc, explain_serde_message(e.message().trim(), key))
    })
}

/// serde's "unknown field `vc`, expected one of `vcs`, ..." with the likely intended name
/// first: "unknown field `vc`; did you mean `vcs`? (expected one of ...)"; a number where a
/// quantity with its unit is expected says how to write it for field `key`.
fn explain_serde_message(message: &str, key: &str) -> String {
    let bare_number = message.starts_with("invalid type: integer")
        || message.starts_with("invalid type: floating point");
    if bare_number && message.contains("expected a string") {
        return format!("{message}: {}", unit_hint(key));
    }
    for what in ["unknown field", "unknown variant"] {
        let Some(rest) = message.strip_prefix(what) else {
            continue;
        };
        let names: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
        let Some((word, candidates)) = names.split_first() else {
            continue;
        };
        let hint = did_you_mean(word, candidates.iter().copied());
        if hint.is_empty() {
            return message.to_string();
        }
        let expected = rest.split_once(", ").map_or("", |(_, e)| e);
        return format!("{what} `{word}`{hint} ({expected})");
    }
    message.to_string()
}

/// How to write a quantity for field `key` (its last part decides: `bandwidth`, a time, a
/// size).
fn unit_hint(key: &str) -> String {
    let name = key.rsplit('.').next().unwrap_or(key);
    let example = if name.contains("bandwidth") {
        "\"25 GB/s\" or \"200 Gb/s\""
    } else if [
        "latency", "delay", "overhead", "time", "period", "drain", "measure", "warmup",
    ]
    .iter()
    .any(|w| name.contains(w))
    {
        "\"100ns\" (ps, ns, us, ms, s)"
    } else if [
        "size",
        "bytes",
        "header",
        "buffer",
        "threshold",
        "mtu",
        "packet",
        "segment",
        "flit",
    ]
    .iter()
    .any(|w| name.contains(w))
    {
        "\"64KiB\" or \"4096 B\""
    } else {
        "\"25 GB/s\", \"100ns\" or \"64KiB\""
    };
    format!("`{key}` takes a quantity with its unit, as a string, e.g. {example} (docs/machine.md gives each field's unit)")
}

fn override_key(ov: &str) -> &str {
    ov.split_once('=').map_or(ov, |(k, _)| k.trim())
}

/// `text` as a TOML basic string: quoted, with quotes, backslashes and control characters
/// escaped.
fn basic_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Applies `a.b.c=value` to the TOML text. The value is read as TOML when it parses
/// (`2`, `true`, `[8, 8]`), else as a string (`100ns`, `4 GB/s`).
pub fn apply_override(text: &str, ov: &str) -> Result<String> {
    let cmdline = || Location::file("command line");
    let (key, value) = ov.split_once('=').ok_or_else(|| {
        Error::input(
            cmdline(),
            format!("--set {ov}: expected FIELD=VALUE, e.g. router.switch_latency=100ns"),
        )
    })?;
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Error::input(
            cmdline(),
            format!("--set {ov}: '{key}' is not a field path like router.vcs"),
        ));
    }
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| Error::input(cmdline(), format!("--set {ov}: {e}")))?;
    let value_text = value.trim();
    let value_of = |toml: &str| {
        format!("v = {toml}")
            .parse::<toml_edit::DocumentMut>()
            .ok()
            .and_then(|d| d.get("v").and_then(|v| v.as_value().cloned()))
    };
    // A value that is not TOML is taken as a string, quoted here: the document then writes
    // it as given (toml_edit's own choice of quotes overflows on a run of 256 quotes).
    let parsed = value_of(value_text)
        .or_else(|| value_of(&basic_string(value_text)))
        .ok_or_else(|| {
            Error::input(
                cmdline().with_field(key),
                format!("--set {ov}: the value is neither TOML nor a string"),
            )
        })?;
    let mut table = doc.as_table_mut();
    for part in &parts[..parts.len() - 1] {
        let item = table
            .entry(part)
            .or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
        if let Some(inline) = item.as_inline_table() {
            *item = toml_edit::Item::Table(inline.clone().into_table());
        }
        table = item.as_table_mut().ok_or_else(|| {
            Error::input(
                cmdline().with_field(key),
                format!("--set {ov}: '{part}' is not a table"),
            )
        })?;
    }
    let last = parts[parts.len() - 1];
    table.insert(last, toml_edit::Item::Value(parsed));
    Ok(doc.to_string())
}
