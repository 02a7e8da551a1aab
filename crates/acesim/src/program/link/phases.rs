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
    if prog.linked {
        return Ok(());
    }
    let comms = Communicators::resolve(prog)?;
    let calls = to_world_ranks(prog, &comms)?;
    let matched = match_calls(prog, &comms, &calls, config)?;
    expand(prog, &comms, &matched);
    match &mut prog.stream {
        // A streamed program's messages are translated as the run reads them.
        Some(s) => {
            prog.comms = comms.list.clone();
            s.comms = Some(std::sync::Arc::new(comms));
        }
        None => prog.comms = comms.list,
    }
    prog.collectives = matched.collectives;
    prog.linked = true;
    Ok(())
}
