//! The skeleton of a JSON written on threads (`json_threads`): the document formatted with
//! its long lists empty, their rows formatted apart and put in afterwards. The long lists'
//! serializers ask `in_skeleton` which to write.

use serde::Serialize;
use std::cell::Cell;

thread_local! {
    /// Set while the skeleton is formatted: the long lists write themselves empty.
    static SKELETON: Cell<bool> = const { Cell::new(false) };
}

/// Whether a long list is being written as part of the skeleton (it writes `[]`).
pub(crate) fn in_skeleton() -> bool {
    SKELETON.with(Cell::get)
}

/// `items` as a JSON list, or an empty one in the skeleton (`per_rank`'s serializer).
pub(crate) fn long_list<T: Serialize, S: serde::Serializer>(
    items: &[T],
    s: S,
) -> Result<S::Ok, S::Error> {
    if in_skeleton() {
        s.collect_seq(std::iter::empty::<&T>())
    } else {
        s.collect_seq(items)
    }
}

/// What `format` returns, formatted with the long lists empty (on this thread).
pub(crate) fn formatting<T>(format: impl FnOnce() -> T) -> T {
    /// Clears the flag however `format` ends.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            SKELETON.with(|s| s.set(false));
        }
    }
    SKELETON.with(|s| s.set(true));
    let _clear = Clear;
    format()
}
