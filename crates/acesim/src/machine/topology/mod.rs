//! Topologies: routers, ports, NICs and links as dense ids ([`ports`]), one file per kind
//! holding its parameters, their checks, its size, how it is built and how it routes, and
//! the built [`Topology`] every network model reads.

pub mod check;
pub mod crossbar;
pub mod dragonfly;
pub mod fat_tree;
pub mod graph;
pub mod graph_file;
pub mod graph_reader;
pub mod graph_routes;
pub mod grid;
pub mod hyperx;
pub mod leaf_spine;
pub mod ports;
pub mod shape;
pub mod slim_fly;

pub use graph::{planned_size, Topology};
pub use ports::{Hop, LinkClass, LinkEnd, Peer, PlannedSize, Ports};
pub use shape::{Kind, Shape, TopologySpec};
