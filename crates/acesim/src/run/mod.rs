//! The drivers: a program on a machine (`simulate`), synthetic traffic on a network
//! (`traffic`, with its `patterns`), and the memory admission both apply first.

pub mod admission;
pub mod events;
pub mod patterns;
pub mod simulate;
pub mod traffic;
