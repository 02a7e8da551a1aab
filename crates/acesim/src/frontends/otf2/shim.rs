//! The Rust side of shim.c: the plain structs it hands over and a safe way to read an
//! archive with them (the OTF2 library does the reading; nothing here parses OTF2).

use std::ffi::{c_char, c_int, c_void, CStr, CString};

pub const DEF_STRING: u32 = 1;
pub const DEF_REGION: u32 = 2;
pub const DEF_LOCATION_GROUP: u32 = 3;
pub const DEF_LOCATION: u32 = 4;
pub const DEF_GROUP: u32 = 5;
pub const DEF_COMM: u32 = 6;
pub const DEF_CLOCK: u32 = 7;

pub const EV_ENTER: u32 = 1;
pub const EV_LEAVE: u32 = 2;
pub const EV_SEND: u32 = 3;
pub const EV_ISEND: u32 = 4;
pub const EV_ISEND_COMPLETE: u32 = 5;
pub const EV_IRECV_REQUEST: u32 = 6;
pub const EV_IRECV: u32 = 7;
pub const EV_RECV: u32 = 8;
pub const EV_REQUEST_TEST: u32 = 9;
pub const EV_REQUEST_CANCELLED: u32 = 10;
pub const EV_COLL_BEGIN: u32 = 11;
pub const EV_COLL_END: u32 = 12;

/// `acesim_otf2_def` (see shim.c for the fields of each kind).
#[repr(C)]
pub struct RawDef {
    pub kind: u32,
    pub id: u64,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub d: u64,
    pub text: *const c_char,
    pub members: *const u64,
    pub n_members: u64,
}

/// `acesim_otf2_event` (see shim.c for the fields of each kind).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub kind: u32,
    pub location: u64,
    pub time: u64,
    pub position: u64,
    pub region: u32,
    pub peer: u32,
    pub comm: u32,
    pub tag: u32,
    pub op: u32,
    pub size: u64,
    pub size2: u64,
    pub request: u64,
}

/// A definition as Rust owns it.
pub struct Def {
    pub kind: u32,
    pub id: u64,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub d: u64,
    pub text: String,
    pub members: Vec<u64>,
}

#[repr(C)]
struct Handle {
    _private: [u8; 0],
}

type DefCb = extern "C" fn(*mut c_void, *const RawDef) -> c_int;
type EventCb = extern "C" fn(*mut c_void, *const Event) -> c_int;

extern "C" {
    fn acesim_otf2_open(anchor: *const c_char, err: *mut c_char, len: usize) -> *mut Handle;
    fn acesim_otf2_close(h: *mut Handle);
    fn acesim_otf2_read_defs(
        h: *mut Handle,
        cb: DefCb,
        user: *mut c_void,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn acesim_otf2_read_events(
        h: *mut Handle,
        locations: *const u64,
        counts: *const u64,
        n: usize,
        cb: EventCb,
        user: *mut c_void,
        err: *mut c_char,
        len: usize,
        bad_location: *mut u64,
        bad_event: *mut u64,
    ) -> c_int;
    fn acesim_otf2_open_location(
        h: *mut Handle,
        location: u64,
        first: u64,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn acesim_otf2_read_more(
        h: *mut Handle,
        count: u64,
        cb: EventCb,
        user: *mut c_void,
        read: *mut u64,
        err: *mut c_char,
        len: usize,
        bad_event: *mut u64,
    ) -> c_int;
}

/// Why reading stopped: the library's message, and where when it knows.
pub struct LibraryError {
    pub message: String,
    pub location: Option<u64>,
    pub event: Option<u64>,
}

/// An open archive.
pub struct Archive(*mut Handle);

// SAFETY: an OTF2 reader has no tie to the thread that opened it; an `Archive` is used
// through `&mut` only, so by one thread at a time (a rank's stream moves with its partition).
unsafe impl Send for Archive {}

impl Drop for Archive {
    fn drop(&mut self) {
        // SAFETY: the handle came from acesim_otf2_open and is closed once.
        unsafe { acesim_otf2_close(self.0) }
    }
}

fn message(buf: &[u8]) -> String {
    CStr::from_bytes_until_nul(buf)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

const ERR_LEN: usize = 1024;

impl Archive {
    pub fn open(anchor: &str) -> Result<Archive, LibraryError> {
        let path = CString::new(anchor).map_err(|_| LibraryError {
            message: "the path holds a NUL byte".into(),
            location: None,
            event: None,
        })?;
        let mut err = [0u8; ERR_LEN];
        // SAFETY: path is NUL-terminated and err has ERR_LEN bytes.
        let h = unsafe { acesim_otf2_open(path.as_ptr(), err.as_mut_ptr().cast(), ERR_LEN) };
        if h.is_null() {
            return Err(LibraryError {
                message: message(&err),
                location: None,
                event: None,
            });
        }
        Ok(Archive(h))
    }

    /// Every global definition, in the archive's order, to `f`; `f` returns false to stop
    /// (then `Ok(false)`).
    pub fn definitions(&mut self, f: &mut dyn FnMut(Def) -> bool) -> Result<bool, LibraryError> {
        extern "C" fn cb(user: *mut c_void, raw: *const RawDef) -> c_int {
            // SAFETY: user is the `&mut &mut dyn FnMut` below, raw a valid struct for the call.
            let (f, raw) = unsafe { (&mut *(user as *mut &mut dyn FnMut(Def) -> bool), &*raw) };
            let text = if raw.text.is_null() {
                String::new()
            } else {
                // SAFETY: OTF2 hands NUL-terminated strings.
                unsafe { CStr::from_ptr(raw.text) }
                    .to_string_lossy()
                    .into_owned()
            };
            let members = if raw.members.is_null() || raw.n_members == 0 {
                Vec::new()
            } else {
                // SAFETY: OTF2 hands n_members ids at members.
                unsafe { std::slice::from_raw_parts(raw.members, raw.n_members as usize) }.to_vec()
            };
            let def = Def {
                kind: raw.kind,
                id: raw.id,
                a: raw.a,
                b: raw.b,
                c: raw.c,
                d: raw.d,
                text,
                members,
            };
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(def))) {
                Ok(true) => 0,
                _ => 1,
            }
        }
        let mut err = [0u8; ERR_LEN];
        let mut f = f;
        let user = &mut f as *mut &mut dyn FnMut(Def) -> bool as *mut c_void;
        // SAFETY: the handle is open; user outlives the call.
        let rc =
            unsafe { acesim_otf2_read_defs(self.0, cb, user, err.as_mut_ptr().cast(), ERR_LEN) };
        match rc {
            0 => Ok(true),
            1 => Ok(false),
            _ => Err(LibraryError {
                message: message(&err),
                location: None,
                event: None,
            }),
        }
    }

    /// The events of `locations`, one location after the other, to `f`; `f` returns false
    /// to stop (then `Ok(false)`). `counts[i]` is how many events `locations[i]` holds by
    /// the definitions (0: unknown): a location whose file ends before or after is an error,
    /// for the library reads a truncated file's missing bytes from unset memory.
    pub fn events(
        &mut self,
        locations: &[u64],
        counts: &[u64],
        f: &mut dyn FnMut(&Event) -> bool,
    ) -> Result<bool, LibraryError> {
        let mut err = [0u8; ERR_LEN];
        let (mut bad_location, mut bad_event) = (u64::MAX, 0u64);
        let mut f = f;
        let user = &mut f as *mut &mut dyn FnMut(&Event) -> bool as *mut c_void;
        // SAFETY: the handle is open; locations, err and the out-parameters are valid.
        let rc = unsafe {
            acesim_otf2_read_events(
                self.0,
                locations.as_ptr(),
                counts.as_ptr(),
                locations.len().min(counts.len()),
                event_cb,
                user,
                err.as_mut_ptr().cast(),
                ERR_LEN,
                &mut bad_location,
                &mut bad_event,
            )
        };
        match rc {
            0 => Ok(true),
            1 => Ok(false),
            _ => Err(LibraryError {
                message: message(&err),
                location: (bad_location != u64::MAX).then_some(bad_location),
                event: (bad_event > 0).then_some(bad_event),
            }),
        }
    }

    /// Opens the events of `location`, to be read by `read_more` from its event `first` (1
    /// for the first), on an archive opened for it alone.
    pub fn open_location(&mut self, location: u64, first: u64) -> Result<(), LibraryError> {
        let mut err = [0u8; ERR_LEN];
        // SAFETY: the handle is open; err has ERR_LEN bytes.
        let rc = unsafe {
            acesim_otf2_open_location(self.0, location, first, err.as_mut_ptr().cast(), ERR_LEN)
        };
        if rc == 0 {
            return Ok(());
        }
        Err(LibraryError {
            message: message(&err),
            location: Some(location),
            event: Some(first),
        })
    }

    /// Up to `count` more events of the location `open_location` opened, to `f`; returns how
    /// many were read and whether `f` let the reading go on.
    pub fn read_more(
        &mut self,
        location: u64,
        count: u64,
        f: &mut dyn FnMut(&Event) -> bool,
    ) -> Result<(u64, bool), LibraryError> {
        let mut err = [0u8; ERR_LEN];
        let (mut read, mut bad_event) = (0u64, 0u64);
        let mut f = f;
        let user = &mut f as *mut &mut dyn FnMut(&Event) -> bool as *mut c_void;
        // SAFETY: the handle is open; err and the out-parameters are valid.
        let rc = unsafe {
            acesim_otf2_read_more(
                self.0,
                count,
                event_cb,
                user,
                &mut read,
                err.as_mut_ptr().cast(),
                ERR_LEN,
                &mut bad_event,
            )
        };
        match rc {
            0 => Ok((read, true)),
            1 => Ok((read, false)),
            _ => Err(LibraryError {
                message: message(&err),
                location: Some(location),
                event: (bad_event > 0).then_some(bad_event),
            }),
        }
    }
}

/// Hands an event to the `&mut dyn FnMut(&Event) -> bool` behind `user` (0: go on).
extern "C" fn event_cb(user: *mut c_void, ev: *const Event) -> c_int {
    // SAFETY: user is the `&mut &mut dyn FnMut` of `events` or `window`, ev a valid struct
    // for the call.
    let (f, ev) = unsafe { (&mut *(user as *mut &mut dyn FnMut(&Event) -> bool), &*ev) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(ev))) {
        Ok(true) => 0,
        _ => 1,
    }
}
