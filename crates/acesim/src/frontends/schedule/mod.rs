//! The plain-text schedule format (docs/schedule-format.md): reader and writer.

mod block;
mod line;
mod operations;
mod parts;
mod read;
mod repeat;
mod tokens;
mod write;

pub use parts::{parse_on, parse_only};
pub use read::parse;
pub use write::write;

#[cfg(test)]
mod tests;
