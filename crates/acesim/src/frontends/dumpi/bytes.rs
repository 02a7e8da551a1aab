//! A big-endian cursor over one rank's `.bin` file whose errors name the file, the record
//! being read and the byte offset. It keeps its own buffer: a record is a dozen fields of
//! a few bytes, and a field costs a bounds check and a copy, not a call through `Read`.

use crate::error::{Error, Location, Result};
use std::io::{Read, Seek, SeekFrom};

/// Bytes read from the file at a time.
const BUFFER: usize = 1 << 16;

/// Reads DUMPI's big-endian integers from `inner`, keeping the offset for errors.
pub struct Bytes<R> {
    inner: R,
    /// Read from `inner` and not consumed yet: `buf[at..end]`, `buf[at]` at offset `pos`.
    buf: Box<[u8]>,
    at: usize,
    end: usize,
    pos: u64,
    len: u64,
    /// The file's name, as errors show it.
    pub name: String,
    /// The call record being read (1-based; 0 outside the records).
    pub record: u64,
    /// Offset of the record being read.
    pub record_start: u64,
}

impl<R: Read + Seek> Bytes<R> {
    pub fn new(mut inner: R, name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        let len = inner
            .seek(SeekFrom::End(0))
            .map_err(|e| Error::io(&name, e))?;
        inner
            .seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(&name, e))?;
        Ok(Bytes {
            inner,
            buf: vec![0; BUFFER].into_boxed_slice(),
            at: 0,
            end: 0,
            pos: 0,
            len,
            name,
            record: 0,
            record_start: 0,
        })
    }

    /// Lets go of the buffer and tells the reader where to resume, so that a run streaming
    /// thousands of rank files holds neither their buffers nor their descriptors between
    /// two reads (`inner` may then close its file: `stream::Reopen`).
    pub fn park(&mut self) -> Result<&mut R> {
        self.inner
            .seek(SeekFrom::Start(self.pos))
            .map_err(|e| Error::io(&self.name, e))?;
        (self.at, self.end) = (0, 0);
        self.buf = Box::default();
        Ok(&mut self.inner)
    }

    pub fn file_len(&self) -> u64 {
        self.len
    }

    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Where the reader is: the file, and the record when inside one.
    pub fn location(&self) -> Location {
        if self.record > 0 {
            Location::file(format!(
                "{}, record {} (byte {:#x})",
                self.name, self.record, self.record_start
            ))
        } else {
            Location::file(format!("{} (byte {:#x})", self.name, self.pos))
        }
    }

    /// An input error at the current place.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::input(self.location(), message)
    }

    pub fn seek(&mut self, pos: u64, what: &str) -> Result<()> {
        if pos > self.len {
            return Err(self.error(format!(
                "the file's index puts the {what} at byte {pos:#x}, past its end ({:#x} bytes): the file is truncated or corrupt",
                self.len
            )));
        }
        // Within what is buffered, the buffer serves it.
        let start = self.pos - self.at as u64;
        if pos >= start && pos <= start + self.end as u64 {
            self.at = (pos - start) as usize;
            self.pos = pos;
            return Ok(());
        }
        self.inner
            .seek(SeekFrom::Start(pos))
            .map_err(|e| Error::io(&self.name, e))?;
        (self.at, self.end, self.pos) = (0, 0, pos);
        Ok(())
    }

    #[inline]
    fn fill<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        if self.end - self.at < N {
            self.refill(N, what)?;
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[self.at..self.at + N]);
        self.at += N;
        self.pos += N as u64;
        Ok(out)
    }

    /// At least `need` bytes in the buffer (what is left moves to its front), or the error
    /// of a file that ends inside `what`.
    #[cold]
    fn refill(&mut self, need: usize, what: &str) -> Result<()> {
        let truncated = |b: &Self| {
            b.error(format!(
                "the file ends inside {what} (expected {need} more bytes at byte {:#x}, the file has {:#x}): truncated",
                b.pos, b.len
            ))
        };
        if self.pos + need as u64 > self.len {
            return Err(truncated(self));
        }
        if self.buf.is_empty() {
            self.buf = vec![0; BUFFER].into_boxed_slice(); // after `park`
        }
        self.buf.copy_within(self.at..self.end, 0);
        (self.end, self.at) = (self.end - self.at, 0);
        while self.end < need {
            let n = self
                .inner
                .read(&mut self.buf[self.end..])
                .map_err(|e| Error::io(&self.name, e))?;
            if n == 0 {
                return Err(truncated(self));
            }
            self.end += n;
        }
        Ok(())
    }

    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.fill::<1>(what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_be_bytes(self.fill(what)?))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_be_bytes(self.fill(what)?))
    }

    pub fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.fill(what)?))
    }

    pub fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_be_bytes(self.fill(what)?))
    }

    /// An element count that must fit in the rest of the file at `each` bytes an element.
    fn count(&mut self, what: &str, each: u64) -> Result<usize> {
        let n = self.i32(what)?;
        let left = self.len - self.pos;
        if n < 0 || (n as u64).saturating_mul(each) > left {
            return Err(self.error(format!(
                "{what} has {n} elements, which the {left} bytes left in the file cannot hold: corrupt record"
            )));
        }
        Ok(n as usize)
    }

    /// `i32 n` then `n` i32 values.
    pub fn arr32(&mut self, what: &str) -> Result<Vec<i32>> {
        let n = self.count(what, 4)?;
        (0..n).map(|_| self.i32(what)).collect()
    }

    /// `i32 n` then `n` u16 values.
    pub fn arr16(&mut self, what: &str) -> Result<Vec<u16>> {
        let n = self.count(what, 2)?;
        (0..n).map(|_| self.u16(what)).collect()
    }

    /// `i32 n` then `n` bytes, skipped.
    pub fn chars(&mut self, what: &str) -> Result<()> {
        let n = self.count(what, 1)?;
        self.skip(n as u64, what)
    }

    pub fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        if self.pos + n > self.len {
            return Err(self.error(format!("the file ends inside {what}: truncated")));
        }
        self.seek(self.pos + n, what)
    }
}
