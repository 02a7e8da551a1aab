//! Placing ranks on nodes: block, cyclic, seeded random, or from a file.

use crate::error::{Error, Location, Result};
use crate::machine::options::PlacementPolicy;
use crate::rng::SplitMix64;

/// Where ranks live: node of each rank and its index among the node's ranks.
#[derive(Debug, Clone)]
pub struct Placement {
    pub node: Vec<u32>,
    pub local: Vec<u32>,
}

/// Nodes a run of `ranks` ranks at `rpn` per node occupies (before the topology is built).
pub fn nodes_needed(policy: &PlacementPolicy, rpn: u32, ranks: u32) -> Result<u32> {
    Ok(match policy {
        PlacementPolicy::File(_) => place(policy, rpn, ranks)?
            .node
            .iter()
            .max()
            .map_or(1, |&m| m + 1),
        PlacementPolicy::Block | PlacementPolicy::Cyclic | PlacementPolicy::Random { .. } => {
            ranks.div_ceil(rpn).max(1)
        }
    })
}

/// Node of every rank and its index among the ranks of its node.
pub fn place(policy: &PlacementPolicy, rpn: u32, ranks: u32) -> Result<Placement> {
    let nodes = ranks.div_ceil(rpn).max(1);
    let node: Vec<u32> = match policy {
        PlacementPolicy::Block => (0..ranks).map(|r| r / rpn).collect(),
        PlacementPolicy::Cyclic => (0..ranks).map(|r| r % nodes).collect(),
        PlacementPolicy::Random { seed } => {
            // Shuffle the block layout's slots (Fisher-Yates).
            let mut slots: Vec<u32> = (0..ranks).map(|r| r / rpn).collect();
            let mut rng = SplitMix64(*seed);
            for i in (1..slots.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                slots.swap(i, j);
            }
            slots
        }
        PlacementPolicy::File(path) => read_file(path, rpn, ranks)?,
    };
    let mut count: Vec<u32> = vec![0; node.iter().max().map_or(1, |&m| m as usize + 1)];
    let local = node
        .iter()
        .map(|&n| {
            count[n as usize] += 1;
            count[n as usize] - 1
        })
        .collect();
    Ok(Placement { node, local })
}

/// The node of every rank, read from the placement file.
fn read_file(path: &str, rpn: u32, ranks: u32) -> Result<Vec<u32>> {
    Ok(read_lines(path, rpn, ranks)?
        .into_iter()
        .map(|(n, _)| n)
        .collect())
}

/// The node of every rank and the line of the placement file that names it.
fn read_lines(path: &str, rpn: u32, ranks: u32) -> Result<Vec<(u32, usize)>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::input(
            Location::file(path).with_field("placement.file"),
            format!("cannot read the placement file: {e}"),
        )
    })?;
    let mut node = Vec::with_capacity(ranks as usize);
    let mut per_node: std::collections::HashMap<u32, u32> = Default::default();
    let mut last_line = 0;
    for (i, line) in text.lines().enumerate() {
        last_line = i + 1;
        let t = line.split('#').next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        let at = || Location::at(path, i + 1, 1).with_field("node");
        if node.len() == ranks as usize {
            return Err(Error::input(
                at(),
                format!(
                    "a node for rank {} but the run has {ranks} ranks (one line per rank, rank 0 first)",
                    node.len()
                ),
            ));
        }
        let n: u32 = t.parse().map_err(|_| {
            Error::input(
                at(),
                format!("'{t}' is not a node number (expected one non-negative integer per line)"),
            )
        })?;
        if n >= 1 << 28 {
            return Err(Error::input(
                at(),
                format!("node {n} is out of range (at most 2^28 nodes)"),
            ));
        }
        let k = per_node.entry(n).or_insert(0);
        *k += 1;
        if *k > rpn {
            return Err(Error::input(
                at(),
                format!("node {n} gets more than placement.ranks_per_node = {rpn} ranks"),
            ));
        }
        node.push((n, i + 1));
    }
    if node.len() != ranks as usize {
        let mut loc = Location::file(path).with_field("node");
        loc.line = Some(last_line.max(1));
        return Err(Error::input(
            loc,
            format!(
                "the placement file places {} ranks but the run has {ranks} (one line per rank)",
                node.len()
            ),
        ));
    }
    Ok(node)
}

/// Checks that a placement fits a machine of `nodes` nodes; for a placement file, the
/// error names the first line with a node the machine does not have.
pub fn check_fits(policy: &PlacementPolicy, rpn: u32, ranks: u32, nodes: u32) -> Result<()> {
    let PlacementPolicy::File(path) = policy else {
        return Ok(());
    };
    for (rank, (n, line)) in read_lines(path, rpn, ranks)?.into_iter().enumerate() {
        if n >= nodes {
            return Err(Error::input(
                Location::at(path, line, 1).with_field("node"),
                format!(
                    "rank {rank} is placed on node {n} but the machine has {nodes} nodes (0..{})",
                    nodes.saturating_sub(1)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(policy: &str, rpn: u32) -> (PlacementPolicy, u32) {
        let policy = match policy {
            "block" => PlacementPolicy::Block,
            "cyclic" => PlacementPolicy::Cyclic,
            "random" => PlacementPolicy::Random { seed: 7 },
            file => PlacementPolicy::File(file.into()),
        };
        (policy, rpn)
    }

    fn place(c: &(PlacementPolicy, u32), ranks: u32) -> Result<Placement> {
        super::place(&c.0, c.1, ranks)
    }

    fn nodes_needed(c: &(PlacementPolicy, u32), ranks: u32) -> Result<u32> {
        super::nodes_needed(&c.0, c.1, ranks)
    }

    fn check_fits(c: &(PlacementPolicy, u32), ranks: u32, nodes: u32) -> Result<()> {
        super::check_fits(&c.0, c.1, ranks, nodes)
    }

    #[test]
    fn block_cyclic_and_random_fill_nodes_evenly() {
        assert_eq!(
            place(&cfg("block", 2), 5).unwrap().node,
            vec![0, 0, 1, 1, 2]
        );
        assert_eq!(
            place(&cfg("cyclic", 2), 5).unwrap().node,
            vec![0, 1, 2, 0, 1]
        );
        let p = place(&cfg("cyclic", 2), 5).unwrap();
        assert_eq!(p.local, vec![0, 0, 0, 1, 1]);
        let r = place(&cfg("random", 4), 16).unwrap();
        let mut counts = [0; 4];
        for &n in &r.node {
            counts[n as usize] += 1;
        }
        assert_eq!(counts, [4, 4, 4, 4]);
        assert_eq!(
            r.node,
            place(&cfg("random", 4), 16).unwrap().node,
            "same seed, same placement"
        );
        let other = (PlacementPolicy::Random { seed: 8 }, 4);
        assert_ne!(r.node, place(&other, 16).unwrap().node);
        assert_eq!(nodes_needed(&cfg("block", 2), 5).unwrap(), 3);
    }

    #[test]
    fn placement_files_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.txt");
        std::fs::write(&f, "# node per rank\n3\n0\n3\n").unwrap();
        let c = cfg(&f.display().to_string(), 2);
        let p = place(&c, 3).unwrap();
        assert_eq!((p.node, p.local), (vec![3, 0, 3], vec![0, 0, 1]));
        assert_eq!(nodes_needed(&c, 3).unwrap(), 4);
        assert!(place(&c, 4)
            .unwrap_err()
            .to_string()
            .contains("places 3 ranks but the run has 4"));
        assert!(place(&c, 2)
            .unwrap_err()
            .to_string()
            .contains(":4:1: field `node`: a node for rank 2 but the run has 2 ranks"));
        assert!(check_fits(&c, 3, 3).unwrap_err().to_string().contains(
            ":2:1: field `node`: rank 0 is placed on node 3 but the machine has 3 nodes"
        ));
        std::fs::write(&f, "1\n1\n1\n").unwrap();
        assert!(place(&c, 3)
            .unwrap_err()
            .to_string()
            .contains(":3:1: field `node`: node 1 gets more than"));
        std::fs::write(&f, "1\nx\n").unwrap();
        assert!(place(&c, 2)
            .unwrap_err()
            .to_string()
            .contains(":2:1: field `node`: 'x' is not a node number"));
    }
}
