//! Checks shared by the shapes' readers.

use crate::error::{Error, Result};

/// How a shape's reader reports a bad field: the dotted field and the message.
pub type Bad<'a> = &'a dyn Fn(&str, String) -> Error;

/// `topology.FIELD`, when given, is at least 1.
pub fn positive(bad: Bad, field: &str, v: Option<u32>) -> Result<()> {
    if v == Some(0) {
        return Err(bad(
            &format!("topology.{field}"),
            format!("{field} must be at least 1"),
        ));
    }
    Ok(())
}
