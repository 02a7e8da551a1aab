//! The `.meta` file of a DUMPI trace: `key=value` lines; `numprocs` is the rank count and
//! `fileprefix` names the rank files `PREFIX-NNNN.bin` beside it.

use crate::error::{Error, Location, Result};
use std::path::{Path, PathBuf};

/// What acesim needs from a `.meta` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub ranks: u32,
    pub prefix: String,
    /// `version.subversion.subsubversion`, when given.
    pub version: Option<[u8; 3]>,
    /// The folder of the `.meta` file (the rank files are there).
    pub dir: PathBuf,
}

impl Meta {
    /// Parses the text of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Meta> {
        let name = path.display().to_string();
        let mut ranks = None;
        let mut prefix = None;
        let mut version = [None; 3];
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let at = || Location::at(&name, i + 1, 1);
            let Some((key, value)) = line.split_once('=') else {
                return Err(Error::input(
                    at(),
                    format!("expected `key=value` in a DUMPI .meta file, found `{line}`"),
                ));
            };
            let (key, value) = (key.trim(), value.trim());
            let number = |v: &str| -> Result<u32> {
                v.parse().map_err(|_| {
                    Error::input(
                        at().with_field(key),
                        format!("expected a number, found `{v}`"),
                    )
                })
            };
            match key {
                "numprocs" => ranks = Some(number(value)?),
                "fileprefix" => prefix = Some(value.to_string()),
                "version" => version[0] = Some(number(value)?),
                "subversion" => version[1] = Some(number(value)?),
                "subsubversion" => version[2] = Some(number(value)?),
                _ => {}
            }
        }
        let missing = |key: &str| {
            Error::input(
                Location::file(&name).with_field(key),
                format!("the DUMPI .meta file has no `{key}=` line"),
            )
        };
        let ranks = ranks.ok_or_else(|| missing("numprocs"))?;
        if ranks == 0 {
            return Err(Error::input(
                Location::file(&name).with_field("numprocs"),
                "numprocs is 0: a trace needs at least one rank",
            ));
        }
        let prefix = prefix.ok_or_else(|| missing("fileprefix"))?;
        let version = match version {
            [Some(a), Some(b), Some(c)] => Some([a as u8, b as u8, c as u8]),
            _ => None,
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Meta {
            ranks,
            prefix,
            version,
            dir,
        })
    }

    /// The `.bin` file of rank `r`.
    pub fn rank_file(&self, r: u32) -> PathBuf {
        // `fileprefix` may be a path; only its file name is looked for beside the .meta.
        let base = Path::new(&self.prefix)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.prefix.clone());
        self.dir.join(format!("{base}-{r:04}.bin"))
    }
}
