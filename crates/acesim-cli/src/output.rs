//! Output files: where each one really goes, checked before any work, and written all or
//! nothing after the work (README "Outputs").
//!
//! - A symbolic link is followed to its final target, and a regular file (or a new one) is
//!   written through a temporary file in the target's folder renamed onto the target's name:
//!   never half a file, and the link stays a link.
//! - A new file is created as any tool would (0666 less the umask); an existing file keeps
//!   its mode (and, where permitted, its owner).
//! - Anything else is written in place, never created, truncated or renamed over: devices
//!   and pipes (`/dev/null`, a FIFO), and every path under `/dev`, `/proc` or `/sys`.
//!   `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1` (and the same for 2) write to acesim's own
//!   standard output (error), after what was printed before; any other such path is opened
//!   for appending.
//! - All the temporary files are written first; only when every one is complete (and the
//!   in-place outputs written) are they renamed into place, so an output that fails (a full
//!   disk) leaves every other output file as it was.

use acesim::error::{Error, Location};
use std::fs::Metadata;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where an output goes.
#[derive(Debug)]
enum Dest {
    /// Written as it is, never renamed over.
    Direct(Direct),
    /// A regular file or a new one: a temporary file beside `target`, renamed onto it.
    Atomic {
        target: PathBuf,
        existing: Option<Metadata>,
    },
}

/// An output written as it is.
#[derive(Debug)]
enum Direct {
    /// acesim's standard output (`-`, `/dev/stdout`, `/proc/self/fd/1`, ...).
    Stdout,
    /// acesim's standard error (`/dev/stderr`, ...).
    Stderr,
    /// Opened for appending, never created: a device, a pipe, a path under /dev or /proc.
    InPlace(PathBuf),
}

/// One output file of a command, checked: `option` is how the command line names it.
#[derive(Debug)]
pub struct Output {
    option: String,
    path: PathBuf,
    dest: Dest,
}

/// The identity of a file, to tell when two names are the same file.
#[derive(PartialEq, Eq, Debug)]
enum Key {
    Inode(u64, u64),
    Path(PathBuf),
}

fn inode(m: &Metadata) -> Key {
    Key::Inode(m.dev(), m.ino())
}

/// The folders in which acesim never creates, renames or truncates a file.
fn special(p: &Path) -> bool {
    ["/dev", "/proc", "/sys"].iter().any(|d| p.starts_with(d))
}

/// Standard output (1) or error (2) when `p` names one of acesim's own descriptors.
fn own_fd(p: &Path) -> Option<u32> {
    let s = p.to_str()?;
    match s {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let pid = format!("/proc/{}/fd/", std::process::id());
    let fd = [
        "/dev/fd/",
        "/proc/self/fd/",
        "/proc/thread-self/fd/",
        pid.as_str(),
    ]
    .iter()
    .find_map(|d| s.strip_prefix(d))?;
    match fd {
        "1" => Some(1),
        "2" => Some(2),
        _ => None,
    }
}

fn refuse(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::input(
        Location::file(path.display().to_string()),
        format!("cannot write this output file: {why}"),
    )
}

impl Output {
    /// Resolves and checks `path` (given as option `option`): that it can be written, before
    /// any work, so that a bad path fails at once, names the path and leaves nothing behind.
    pub fn check(option: &str, path: &Path) -> acesim::Result<Output> {
        let dest = resolve(path)?;
        if let Dest::Atomic { target, .. } = &dest {
            let dir = folder(target);
            let why = if !dir.exists() {
                format!("the folder '{}' does not exist", dir.display())
            } else if !dir.is_dir() {
                format!("'{}' is not a folder", dir.display())
            } else {
                match temp_in(&dir, target) {
                    Ok(_) => String::new(),
                    Err(e) => format!("cannot create a file in '{}': {}", dir.display(), e.kind()),
                }
            };
            if !why.is_empty() {
                return Err(refuse(path, why));
            }
        }
        Ok(Output {
            option: option.to_string(),
            path: path.to_path_buf(),
            dest,
        })
    }

    /// The identity of the file this output replaces or creates; none for the standard
    /// streams and for in-place outputs (writing to `/dev/null` twice is fine).
    fn key(&self) -> Option<Key> {
        let Dest::Atomic { target, existing } = &self.dest else {
            return None;
        };
        Some(match existing {
            Some(m) => inode(m),
            None => {
                let dir = std::fs::canonicalize(folder(target)).unwrap_or_else(|_| folder(target));
                Key::Path(dir.join(target.file_name().unwrap_or_default()))
            }
        })
    }
}

/// The folder of `p` ("." for a bare name).
fn folder(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary file beside `target`: `.NAME.XXXXXX.tmp`, created 0666 less the umask.
fn temp_in(dir: &Path, target: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let name = target
        .file_name()
        .map(|n| format!(".{}.", n.to_string_lossy()))
        .unwrap_or_else(|| ".acesim.".into());
    tempfile::Builder::new()
        .prefix(&name)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
}

/// Follows `path` to where the output really goes.
fn resolve(path: &Path) -> acesim::Result<Dest> {
    if path.as_os_str() == "-" {
        return Ok(Dest::Direct(Direct::Stdout));
    }
    let mut cur = path.to_path_buf();
    let mut hops = 0;
    loop {
        let abs = std::path::absolute(&cur).map_err(|e| refuse(path, e))?;
        match own_fd(&abs) {
            Some(1) => return Ok(Dest::Direct(Direct::Stdout)),
            Some(_) => return Ok(Dest::Direct(Direct::Stderr)),
            None => {}
        }
        if special(&abs) {
            return match std::fs::metadata(&cur) {
                Ok(m) if m.is_dir() => Err(refuse(path, format!("'{}' is a folder", cur.display()))),
                Ok(_) => Ok(Dest::Direct(Direct::InPlace(cur))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(refuse(
                    path,
                    format!(
                        "'{}' does not exist, and acesim creates no files under /dev, /proc or /sys",
                        cur.display()
                    ),
                )),
                Err(e) => Err(refuse(path, format!("{}: {e}", cur.display()))),
            };
        }
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > 40 {
                    return Err(refuse(path, "too many levels of symbolic links"));
                }
                let to = std::fs::read_link(&cur).map_err(|e| refuse(path, e))?;
                cur = folder(&cur).join(to);
            }
            Ok(m) if m.is_file() => {
                return Ok(Dest::Atomic {
                    target: cur,
                    existing: Some(m),
                })
            }
            Ok(m) if m.is_dir() => {
                return Err(refuse(path, format!("'{}' is a folder", cur.display())))
            }
            Ok(_) => return Ok(Dest::Direct(Direct::InPlace(cur))),
            // Absent (or its folder is not there): check() says why it cannot be made.
            Err(_) => {
                return Ok(Dest::Atomic {
                    target: cur,
                    existing: None,
                })
            }
        }
    }
}

/// Refuses outputs that name the same file, or an input file (`inputs`: option and path),
/// before any work: one would overwrite the other. Inputs that do not exist are ignored.
pub fn check_distinct(outputs: &[&Output], inputs: &[(&str, &Path)]) -> acesim::Result<()> {
    let keys: Vec<Option<Key>> = outputs.iter().map(|o| o.key()).collect();
    for (i, a) in outputs.iter().enumerate() {
        let Some(ka) = &keys[i] else { continue };
        for (j, b) in outputs.iter().enumerate().skip(i + 1) {
            if keys[j].as_ref() == Some(ka) {
                return Err(Error::input(
                    Location::file("command line").with_field(b.option.trim_start_matches('-')),
                    format!(
                        "{} and {} name the same file ('{}' and '{}'): one would overwrite the other; give them different files",
                        a.option,
                        b.option,
                        a.path.display(),
                        b.path.display()
                    ),
                ));
            }
        }
        for (option, input) in inputs {
            let Ok(m) = std::fs::metadata(input) else {
                continue;
            };
            if inode(&m) == *ka {
                return Err(Error::input(
                    Location::file("command line").with_field(a.option.trim_start_matches('-')),
                    format!(
                        "{} '{}' is the {option} '{}': writing it would overwrite an input; give another file",
                        a.option,
                        a.path.display(),
                        input.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What to write into an output.
pub type Producer<'a> = Box<dyn FnOnce(&mut dyn Write) -> std::io::Result<()> + 'a>;

fn write_err(path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("cannot write {}", path.display()), e)
}

/// Writes every output, all or nothing: first each regular file's temporary file, then the
/// in-place outputs and standard streams, then the renames. An error before the renames
/// leaves every regular output file as it was (temporary files are removed).
pub fn write_all(outputs: Vec<(Output, Producer<'_>)>) -> acesim::Result<()> {
    let mut staged = Vec::new();
    let mut direct = Vec::new();
    for (out, produce) in outputs {
        match out.dest {
            Dest::Atomic { target, existing } => {
                let dir = folder(&target);
                let mut tmp = temp_in(&dir, &target).map_err(|e| write_err(&out.path, e))?;
                {
                    let mut w = std::io::BufWriter::new(tmp.as_file_mut());
                    produce(&mut w)
                        .and_then(|()| w.flush())
                        .map_err(|e| write_err(&out.path, e))?;
                }
                if let Some(m) = &existing {
                    let f = tmp.as_file();
                    f.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))
                        .map_err(|e| write_err(&out.path, e))?;
                    // Keep the owner where permitted (root writing another user's file).
                    let _ = std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid()));
                }
                staged.push((out.path, target, tmp));
            }
            Dest::Direct(d) => direct.push((out.path, d, produce)),
        }
    }
    for (path, dest, produce) in direct {
        match dest {
            Direct::Stdout => {
                let mut o = std::io::stdout().lock();
                produce(&mut o)
                    .and_then(|()| o.flush())
                    .map_err(|e| Error::io("standard output", e))?;
            }
            Direct::Stderr => {
                let mut o = std::io::stderr().lock();
                produce(&mut o)
                    .and_then(|()| o.flush())
                    .map_err(|e| Error::io("standard error", e))?;
            }
            Direct::InPlace(p) => {
                let f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&p)
                    .map_err(|e| write_err(&path, e))?;
                let mut w = std::io::BufWriter::new(f);
                produce(&mut w)
                    .and_then(|()| w.flush())
                    .map_err(|e| write_err(&path, e))?;
            }
        }
    }
    for (path, target, tmp) in staged {
        tmp.persist(&target)
            .map_err(|e| write_err(&path, e.error))?;
    }
    Ok(())
}
