//! The phases of linking, in order.

use crate::error::Result;
use crate::program::collective_defaults::CollectivesConfig;
use crate::program::link::collective_calls::match_calls;
use crate::program::link::communicators::Communicators;
use crate::program::link::expand::expand;
use crate::program::link::world_ranks::to_world_ranks;
use crate::program::ops::Program;

/// Resolves and expands `prog` in place. `config` supplies the default algorithms.
pub fn link(prog: &mut Program, config: &CollectivesConfig) -> Result<()> {
    link_keeping(prog, config).map(|_| ())
}

/// `link`, returning the communicators of a program read as the run goes (its messages
/// are translated with them as the run reads them: `program::stream`); `None` for the
/// others, or when `prog` was linked before.
pub fn link_keeping(
    prog: &mut Program,
    config: &CollectivesConfig,
) -> Result<Option<Communicators>> {
    if prog.linked {
        return Ok(None);
    }
    let comms = Communicators::resolve(prog)?;
    let calls = to_world_ranks(prog, &comms)?;
    let matched = match_calls(prog, &comms, &calls, config)?;
    expand(prog, &comms, &calls, &matched);
    drop(calls);
    prog.collectives = matched.collectives;
    prog.linked = true;
    if prog.stream.is_some() {
        prog.comms = comms.list.clone();
        return Ok(Some(comms));
    }
    prog.comms = comms.list;
    Ok(None)
}
