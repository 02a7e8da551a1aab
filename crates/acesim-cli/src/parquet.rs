//! `acesim run --parquet DIR`: the run's tables as Parquet files, written by the Python
//! package (pyarrow) from the JSON summary, which passes through a hidden file beside DIR
//! that is removed whatever happens.

use acesim::error::{Error, Location};
use acesim::frontends::python;
use acesim::results::Results;
use std::path::{Path, PathBuf};

/// Checks before the run that `dir` can be written: its parent exists, and it is a folder
/// if it exists.
pub(crate) fn check(dir: &Path) -> acesim::Result<PathBuf> {
    let at = || Location::file(dir.display().to_string()).with_field("parquet");
    if dir.exists() && !dir.is_dir() {
        return Err(Error::input(at(), "exists and is not a folder"));
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(Error::input(
            at(),
            format!("the folder '{}' does not exist", parent.display()),
        ));
    }
    Ok(parent)
}

/// Writes the tables of `results` into `dir` (whose parent `check` returned), its JSON
/// formatted on `threads` threads.
pub(crate) fn write(
    results: &Results,
    dir: &Path,
    parent: &Path,
    threads: usize,
) -> acesim::Result<()> {
    let name = dir.file_name().map_or_else(
        || "tables".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let tmp = parent.join(format!(".{name}.{}.acesim.json", std::process::id()));
    let written = (|| {
        let file =
            std::fs::File::create(&tmp).map_err(|e| Error::io(tmp.display().to_string(), e))?;
        let mut w = std::io::BufWriter::new(file);
        results
            .write_json_on(&mut w, threads)
            .and_then(|()| std::io::Write::flush(&mut w))
            .map_err(|e| Error::io(tmp.display().to_string(), e))?;
        let args = [
            "parquet".to_string(),
            tmp.display().to_string(),
            "-o".to_string(),
            dir.display().to_string(),
        ];
        python::run_package(&args, "acesim run --parquet").map(|_| ())
    })();
    let _ = std::fs::remove_file(&tmp);
    written
}
