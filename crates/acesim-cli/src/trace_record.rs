//! `acesim trace record -o DIR -- mpirun -np 16 ./app args`: runs an unmodified MPI program
//! under the system MPI with the PMPI library of `tracer/acesim_dumpi.c` preloaded, which
//! writes a DUMPI trace (DIR/PREFIX.meta and one DIR/PREFIX-NNNN.bin per rank); then reads
//! the trace back whole and says how to replay it.
//!
//! The library is compiled for the run with `mpicc -shared -fPIC` (or `$MPICC`) in a
//! temporary folder that is removed afterwards, unless `--tracer` names a prebuilt one. It is
//! preloaded with `LD_PRELOAD` and told where to write by `ACESIM_DUMPI_PREFIX`; both are set
//! in the command's environment and, for Open MPI's `mpirun`/`mpiexec`, also forwarded to
//! every rank with `-x`.

use crate::trace_summary::describe;
use acesim::error::{Error, Location};
use acesim::frontends::dumpi::{self, Meta, TraceOptions};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The library's source, built into acesim so the command needs nothing but an MPI.
const TRACER_SOURCE: &str = include_str!("../../../tracer/acesim_dumpi.c");

fn usage(field: &str, message: impl Into<String>) -> Error {
    Error::input(Location::file("command line").with_field(field), message)
}

/// A program on PATH (or a path), as the shell would find it.
fn which(program: &str) -> Option<PathBuf> {
    let p = Path::new(program);
    if program.contains('/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|c| is_executable(c))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Whether `launcher` is Open MPI's (its `--version` says so): it then gets `-x VAR`.
fn is_open_mpi(launcher: &Path) -> bool {
    let name = launcher
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !["mpirun", "mpiexec", "orterun", "prterun"].contains(&name.as_str()) {
        return false;
    }
    Command::new(launcher)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).to_string()
                + &String::from_utf8_lossy(&o.stderr);
            text.contains("Open MPI") || text.contains("OpenRTE") || text.contains("PRRTE")
        })
        .unwrap_or(false)
}

/// Compiles the tracing library into `dir` with mpicc.
fn build_tracer(dir: &Path) -> acesim::Result<PathBuf> {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    let Some(mpicc_path) = which(&mpicc) else {
        return Err(Error::Program {
            message: format!(
                "no `{mpicc}` on PATH: `acesim trace record` compiles its tracing library with the MPI compiler wrapper of the MPI that runs the program. Install an MPI (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev; scripts/setup does it), set MPICC, or give --tracer with a library built by `make -C tracer`"
            ),
        });
    };
    let src = dir.join("acesim_dumpi.c");
    let lib = dir.join("libacesim_dumpi.so");
    std::fs::write(&src, TRACER_SOURCE).map_err(|e| Error::io(src.display().to_string(), e))?;
    let out = Command::new(&mpicc_path)
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .output()
        .map_err(|e| Error::io(mpicc_path.display().to_string(), e))?;
    if !out.status.success() {
        return Err(Error::Program {
            message: format!(
                "{} could not compile the tracing library (tracer/acesim_dumpi.c):\n{}",
                mpicc_path.display(),
                String::from_utf8_lossy(&out.stderr).trim_end()
            ),
        });
    }
    Ok(lib)
}

/// Makes `dir` and checks that files can be written in it; removes an earlier trace with the
/// same prefix (its rank files would otherwise mix with the new ones).
fn prepare_dir(dir: &Path, prefix: &str) -> acesim::Result<()> {
    let name = dir.display().to_string();
    let cannot = |e: std::io::Error| {
        usage(
            "-o",
            format!(
                "the trace folder {name} cannot be written ({e}): give -o a folder you can write"
            ),
        )
    };
    std::fs::create_dir_all(dir).map_err(cannot)?;
    let probe = dir.join(format!(".{prefix}.acesim-write-check"));
    std::fs::write(&probe, b"").map_err(cannot)?;
    let _ = std::fs::remove_file(&probe);
    let mut removed = 0;
    for entry in std::fs::read_dir(dir).map_err(cannot)?.flatten() {
        let f = entry.file_name().to_string_lossy().into_owned();
        let rank_file = f
            .strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('-'))
            .and_then(|r| r.strip_suffix(".bin"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if rank_file || f == format!("{prefix}.meta") {
            std::fs::remove_file(entry.path()).map_err(cannot)?;
            removed += 1;
        }
    }
    if removed > 0 {
        eprintln!(
            "acesim trace record: removed the {removed} files of an earlier trace {name}/{prefix}"
        );
    }
    Ok(())
}

/// `acesim trace record`; returns the exit code (the program's when it fails).
pub(crate) fn record(
    dir: &Path,
    prefix: &str,
    tracer: Option<&Path>,
    command: &[String],
) -> acesim::Result<i32> {
    if prefix.is_empty() || prefix.contains('/') || prefix.starts_with('.') {
        return Err(usage(
            "--prefix",
            format!(
                "`{prefix}` is not a file-name prefix (expected a name such as trace, without /)"
            ),
        ));
    }
    let Some(program) = command.first() else {
        return Err(usage(
            "COMMAND",
            "no command to run: give it after --, e.g. acesim trace record -o DIR -- mpirun -np 4 ./app",
        ));
    };
    let Some(launcher) = which(program) else {
        let hint = if ["mpirun", "mpiexec"].contains(&program.as_str()) {
            " (no MPI is installed: Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev; scripts/setup does it)"
        } else {
            ""
        };
        return Err(usage(
            "COMMAND",
            format!("`{program}` is not a program on PATH or a file{hint}"),
        ));
    };
    if let Some(t) = tracer {
        if !t.is_file() {
            return Err(usage(
                "--tracer",
                format!(
                    "{} is not a file (build the library with `make -C tracer`)",
                    t.display()
                ),
            ));
        }
    }
    // The library first: without mpicc nothing is made.
    let build = tempfile::Builder::new()
        .prefix("acesim-tracer")
        .tempdir()
        .map_err(|e| Error::io("a temporary folder for the tracing library", e))?;
    let lib = match tracer {
        Some(t) => t
            .canonicalize()
            .map_err(|e| Error::io(t.display().to_string(), e))?,
        None => build_tracer(build.path())?,
    };
    prepare_dir(dir, prefix)?;
    let dir = dir
        .canonicalize()
        .map_err(|e| Error::io(dir.display().to_string(), e))?;

    let out_prefix = dir.join(prefix);
    let preload: OsString = match std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        Some(old) => {
            let mut v = lib.clone().into_os_string();
            v.push(":");
            v.push(old);
            v
        }
        None => lib.clone().into_os_string(),
    };
    let mut cmd = Command::new(&launcher);
    if is_open_mpi(&launcher) {
        cmd.args(["-x", "LD_PRELOAD", "-x", "ACESIM_DUMPI_PREFIX"]);
    }
    cmd.args(&command[1..])
        .env("LD_PRELOAD", &preload)
        .env("ACESIM_DUMPI_PREFIX", &out_prefix);
    // Open MPI refuses to run as root unless told twice; containers and CI machines often
    // are root, and a recording is what the user asked for: allow it, and say so.
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root && is_open_mpi(&launcher) && std::env::var_os("OMPI_ALLOW_RUN_AS_ROOT").is_none() {
        eprintln!(
            "acesim trace record: running as root: OMPI_ALLOW_RUN_AS_ROOT=1 set for Open MPI"
        );
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    eprintln!(
        "acesim trace record: running {} with {} preloaded",
        command.join(" "),
        lib.display()
    );
    let status = cmd
        .status()
        .map_err(|e| Error::io(launcher.display().to_string(), e))?;
    drop(build);
    let meta_path = dir.join(format!("{prefix}.meta"));
    if !status.success() {
        use std::os::unix::process::ExitStatusExt;
        let (code, how) = match (status.code(), status.signal()) {
            (Some(c), _) => (c, format!("exited with code {c}")),
            (None, Some(s)) => (128 + s, format!("was killed by signal {s}")),
            _ => (1, "failed".to_string()),
        };
        eprintln!(
            "error[program]: `{}` {how}; the trace in {} is incomplete: do not replay it",
            command.join(" "),
            dir.display()
        );
        return Ok(if code == 0 { 1 } else { code });
    }
    if !meta_path.is_file() {
        return Err(Error::Program {
            message: format!(
                "`{}` finished but wrote no trace ({} is missing): the program never called MPI_Init and MPI_Finalize through the preloaded library (is it an MPI program, dynamically linked against the MPI that mpicc belongs to? does the launcher pass LD_PRELOAD and ACESIM_DUMPI_PREFIX to the ranks?)",
                command.join(" "),
                meta_path.display(),
            ),
        });
    }
    let text = std::fs::read_to_string(&meta_path)
        .map_err(|e| Error::io(meta_path.display().to_string(), e))?;
    let meta = Meta::parse(&meta_path, &text)?;
    let missing: Vec<String> = (0..meta.ranks)
        .map(|r| meta.rank_file(r))
        .filter(|f| !f.is_file())
        .map(|f| f.display().to_string())
        .collect();
    if !missing.is_empty() {
        return Err(Error::Program {
            message: format!(
                "the trace has {} ranks but {} of their files are missing (first: {}): some ranks did not reach MPI_Finalize",
                meta.ranks,
                missing.len(),
                missing[0]
            ),
        });
    }
    // Read it all back: what acesim will replay.
    let (_, summary) = dumpi::read(&meta_path, &TraceOptions::default())?;
    out!("{}", describe(&meta_path, &summary));
    outln!(
        "replay it: acesim run {} -m table1",
        shell_word(&meta_path.display().to_string())
    );
    Ok(0)
}

/// `s` quoted for a shell when it needs it.
fn shell_word(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
