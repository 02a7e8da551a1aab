//! Inputs that are not text: what they look like, said as an error, before a text reader
//! would call them "not UTF-8" (a DUMPI rank file, an OTF2 anchor, another binary file).

use std::path::Path;

/// What a file acesim cannot read as text looks like, said as an error: a rank of a DUMPI
/// trace, an OTF2 trace, or some other binary file. `Ok` for a file that may be text.
pub fn check_not_binary(path: &Path) -> crate::error::Result<()> {
    use crate::error::{Error, Location};
    use std::io::Read;
    let name = path.display().to_string();
    let mut head = Vec::with_capacity(4096);
    let Ok(f) = std::fs::File::open(path) else {
        return Ok(()); // Reading it says why.
    };
    // A pipe (`/dev/stdin`, `<(...)`) cannot be read twice: its head is the program's.
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    if f.take(4096).read_to_end(&mut head).is_err() {
        return Ok(());
    }
    let at = || Location::file(&name);
    if crate::frontends::dumpi::is_dumpi(&head) {
        return Err(Error::input(
            at(),
            "this is one rank of a DUMPI trace; give the trace's .meta file (it names every rank's .bin file)",
        ));
    }
    if path.extension().is_some_and(|e| e == "otf2") {
        return Err(Error::input(
            at(),
            if crate::frontends::otf2::AVAILABLE {
                "this is an OTF2 trace (its anchor file): read it with --format otf2 (or give it its .otf2 name)"
            } else {
                "this is an OTF2 trace (its anchor file), but this acesim was built without OTF2 support: run scripts/setup (it installs libotf2-trace-dev and builds with the `otf2` feature)"
            },
        ));
    }
    // Text with a stray byte that is not UTF-8 is still text (reading it names the line and
    // column); NUL bytes or many control characters are not.
    let control = head
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)) || b == 0x7f)
        .count();
    if head.contains(&0) || control * 10 > head.len() {
        return Err(Error::input(
            at(),
            "binary file, not a program acesim reads (it reads schedule text, GOAL, MGEN C, Python, DUMPI traces given by their .meta file, OTF2 traces by their .otf2 file, and SimGrid traces)",
        ));
    }
    Ok(())
}
