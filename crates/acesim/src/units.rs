//! Quantities with units written out: time (integer picoseconds), sizes (bytes) and
//! bandwidths (bytes per second).
//!
//! Parsing is exact decimal arithmetic so that `"0.6 ns"` is 600 ps and `"2.8 GB/s"` is
//! 2 800 000 000 B/s with no floating-point rounding. SI prefixes are powers of ten
//! (`KB`, `MB`, `GB`), binary prefixes powers of two (`KiB`, `MiB`, `GiB`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Simulated time in picoseconds.
pub type Ps = u64;

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// A non-negative decimal number `mantissa * 10^-scale`, parsed without rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

impl Decimal {
    fn parse(s: &str) -> Result<Decimal, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("missing number".into());
        }
        if s.starts_with('-') {
            return Err(format!("'{s}' is negative: expected 0 or more"));
        }
        let (int_part, frac_part) = match s.split_once('.') {
            Some((i, f)) => (i, f),
            None => (s, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(format!("'{s}' is not a number"));
        }
        let mut mantissa: u128 = 0;
        for c in int_part.chars().chain(frac_part.chars()) {
            let d = c
                .to_digit(10)
                .ok_or_else(|| format!("'{s}' is not a number"))?;
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(d as u128))
                .ok_or_else(|| format!("'{s}' is too large"))?;
        }
        Ok(Decimal {
            mantissa,
            scale: frac_part.len() as u32,
        })
    }

    /// `self * factor`, which must be a whole number that fits in a u64.
    fn times_whole(self, factor: u128, what: &str, text: &str) -> Result<u64, String> {
        let num = self
            .mantissa
            .checked_mul(factor)
            .ok_or_else(|| format!("'{text}' is too large"))?;
        let den = 10u128
            .checked_pow(self.scale)
            .ok_or_else(|| format!("'{text}' has too many digits"))?;
        if num % den != 0 {
            return Err(format!("'{text}' is not a whole number of {what}"));
        }
        u64::try_from(num / den).map_err(|_| format!("'{text}' is too large"))
    }
}

/// Splits `"4 GB/s"` or `"4GB/s"` into the number and the unit.
fn split_number_unit(s: &str) -> (&str, &str) {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    (s[..end].trim_start_matches('+'), s[end..].trim())
}

/// `'1e3 ns' uses an exponent ...` when the unit that did not parse starts like one.
fn exponent_hint(s: &str, unit: &str) -> Option<String> {
    let rest = unit.strip_prefix(['e', 'E'])?;
    rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
        .then(|| format!("'{}' uses an exponent, which acesim does not read: write the number out (1e3 ns is 1000 ns)", s.trim()))
}

fn time_unit(unit: &str) -> Option<u128> {
    Some(match unit {
        "ps" => 1,
        "ns" => PS_PER_NS as u128,
        "us" | "µs" => PS_PER_US as u128,
        "ms" => PS_PER_MS as u128,
        "s" => PS_PER_S as u128,
        _ => return None,
    })
}

fn size_unit(unit: &str) -> Option<u128> {
    Some(match unit {
        "" | "B" | "b" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    })
}

/// Parses a time such as `"128 ns"`, `"0.6ns"`, `"2.5 us"` into picoseconds.
pub fn parse_time(s: &str) -> Result<Ps, String> {
    let (num, unit) = split_number_unit(s);
    if num.is_empty() {
        return Err(format!(
            "'{}' is not a time: expected a number and a unit, e.g. 100ns (ps, ns, us, ms, s)",
            s.trim()
        ));
    }
    if unit.is_empty() {
        return Err(format!(
            "'{s}' has no unit: write the time with a unit, e.g. {s}ns (ps, ns, us, ms, s)"
        ));
    }
    let factor = time_unit(unit).ok_or_else(|| {
        exponent_hint(s, unit)
            .unwrap_or_else(|| format!("'{unit}' is not a time unit (ps, ns, us, ms, s)"))
    })?;
    let ps = Decimal::parse(num)?.times_whole(factor, "picoseconds", s.trim())?;
    if ps > MAX_TIME {
        return Err(format!(
            "'{}' is longer than acesim simulates (10^6 s)",
            s.trim()
        ));
    }
    Ok(ps)
}

/// Longest time a single quantity may have (10^6 s), so that sums never overflow.
pub const MAX_TIME: Ps = 1_000_000 * PS_PER_S;
/// Largest size of one transfer (1 TiB), so packet counts fit in 32 bits.
pub const MAX_SIZE: u64 = 1 << 40;

/// Parses a size such as `"2 KiB"`, `"48 B"` or `"4096"` (bytes) into bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    match plain_size(s) {
        Some(bytes) => Ok(bytes),
        None => general_size(s),
    }
}

/// `parse_size` of any form: decimals, spaces, and the errors.
fn general_size(s: &str) -> Result<u64, String> {
    let (num, unit) = split_number_unit(s);
    if num.is_empty() {
        return Err(format!(
            "'{}' is not a size: expected a number of bytes with an optional unit, e.g. 4096 or 64KiB",
            s.trim()
        ));
    }
    let factor = size_unit(unit).ok_or_else(|| {
        exponent_hint(s, unit).unwrap_or_else(|| {
            format!("'{unit}' is not a size unit (B, KB, MB, GB, KiB, MiB, GiB)")
        })
    })?;
    let bytes = Decimal::parse(num)?.times_whole(factor, "bytes", s.trim())?;
    if bytes > MAX_SIZE {
        return Err(format!(
            "'{}' is larger than acesim supports (1 TiB)",
            s.trim()
        ));
    }
    Ok(bytes)
}

/// `parse_size` of the common form, whole digits and a unit right after them (`4096`,
/// `64KiB`: a million-rank schedule has millions), without the general reader's decimals;
/// `None` for anything else, which the general reader then takes (and its errors).
fn plain_size(s: &str) -> Option<u64> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let factor = u64::try_from(size_unit(&s[digits..])?).ok()?;
    let n: u64 = s[..digits].parse().ok()?;
    n.checked_mul(factor).filter(|&bytes| bytes <= MAX_SIZE)
}

/// Bits per second of a bandwidth unit in bits (`Gb/s`, `Gbit/s`: vendors quote links so).
fn bit_unit(u: &str) -> Option<u128> {
    Some(match u {
        "b" | "bit" => 1,
        "Kb" | "kb" | "Kbit" | "kbit" => 1_000,
        "Mb" | "Mbit" => 1_000_000,
        "Gb" | "Gbit" => 1_000_000_000,
        "Tb" | "Tbit" => 1_000_000_000_000,
        _ => return None,
    })
}

/// Parses a bandwidth such as `"4 GB/s"`, `"2.8GB/s"` or `"200 Gb/s"` (bits) into bytes
/// per second (bits rounded to whole bytes).
pub fn parse_bandwidth(s: &str) -> Result<u64, String> {
    const UNITS: &str = "B/s, KB/s, MB/s, GB/s, GiB/s; in bits Gb/s or Gbit/s, Mb/s, Tb/s";
    let (num, unit) = split_number_unit(s);
    let per = unit
        .strip_suffix("/s")
        .filter(|_| !num.is_empty())
        .ok_or_else(|| {
            format!("'{s}' is not a bandwidth: write it like '4 GB/s' or '200 Gb/s' ({UNITS})")
        })?;
    let per = per.trim();
    // `b/s` is bits, as `Gb/s` (a size's `b` is a byte).
    let bytes_unit = size_unit(per).filter(|_| !per.is_empty() && per != "b");
    let bw = match (bytes_unit, bit_unit(per)) {
        (Some(factor), _) => {
            Decimal::parse(num)?.times_whole(factor, "bytes per second", s.trim())?
        }
        (None, Some(factor)) => {
            let bits = Decimal::parse(num)?.times_whole(factor, "bits per second", s.trim())?;
            // Rounded to the nearest byte per second.
            bits / 8 + u64::from(bits % 8 >= 4)
        }
        (None, None) => return Err(format!("'{unit}' is not a bandwidth unit ({UNITS})")),
    };
    if bw == 0 {
        return Err(format!("bandwidth '{s}' must be greater than zero"));
    }
    Ok(bw)
}

/// Time to move `bytes` at `bytes_per_s`, rounded up to a whole picosecond.
#[inline]
pub fn transfer_time(bytes: u64, bytes_per_s: u64) -> Ps {
    if bytes == 0 {
        return 0;
    }
    if let Some(num) = bytes.checked_mul(PS_PER_S) {
        // 64-bit division: packets are small, and this is on every hop.
        return num.div_ceil(bytes_per_s);
    }
    let num = bytes as u128 * PS_PER_S as u128;
    num.div_ceil(bytes_per_s as u128) as Ps
}

/// Formats picoseconds in the largest unit that keeps the number readable.
pub fn format_time(ps: Ps) -> String {
    let (div, unit) = if ps >= PS_PER_S {
        (PS_PER_S, "s")
    } else if ps >= PS_PER_MS {
        (PS_PER_MS, "ms")
    } else if ps >= PS_PER_US {
        (PS_PER_US, "us")
    } else if ps >= PS_PER_NS {
        (PS_PER_NS, "ns")
    } else {
        return format!("{ps} ps");
    };
    format!("{:.3} {unit}", ps as f64 / div as f64)
}

/// Formats a time exactly, in the largest unit that divides it (for writing configs back).
pub fn format_time_exact(ps: Ps) -> String {
    for (div, unit) in [
        (PS_PER_S, "s"),
        (PS_PER_MS, "ms"),
        (PS_PER_US, "us"),
        (PS_PER_NS, "ns"),
    ] {
        if ps != 0 && ps.is_multiple_of(div) {
            return format!("{} {unit}", ps / div);
        }
    }
    if ps != 0 && ps.is_multiple_of(100) {
        // Keep "0.6 ns" readable instead of "600 ps". In integers: a float loses the
        // last digit of times of a day or more.
        return format!("{}.{} ns", ps / PS_PER_NS, ps % PS_PER_NS / 100);
    }
    format!("{ps} ps")
}

fn format_scaled(value: u64, units: &[(u64, &str)], base: &str) -> String {
    for &(div, unit) in units {
        if value != 0 && value.is_multiple_of(div) {
            return format!("{} {unit}", value / div);
        }
    }
    for &(div, unit) in units {
        // One decimal, in integers (value * 10 may not fit in 64 bits, and a float loses
        // the last digit of large values).
        if value >= div && div >= 1000 && (u128::from(value) * 10).is_multiple_of(u128::from(div)) {
            return format!("{}.{} {unit}", value / div, value % div * 10 / div);
        }
    }
    format!("{value} {base}")
}

/// Formats bytes per second exactly (e.g. `"2.8 GB/s"`).
pub fn format_bandwidth(bps: u64) -> String {
    format_scaled(
        bps,
        &[
            (1_000_000_000, "GB/s"),
            (1_000_000, "MB/s"),
            (1_000, "KB/s"),
        ],
        "B/s",
    )
}

/// Formats a size exactly (e.g. `"2 KiB"`).
pub fn format_size(bytes: u64) -> String {
    for (div, unit) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes != 0 && bytes.is_multiple_of(div) {
            return format!("{} {unit}", bytes / div);
        }
    }
    format!("{bytes} B")
}

macro_rules! unit_newtype {
    ($name:ident, $inner:ty, $parse:ident, $format:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                $parse(&s).map($name).map_err(serde::de::Error::custom)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$format(self.0))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&$format(self.0))
            }
        }
    };
}

unit_newtype!(
    Time,
    Ps,
    parse_time,
    format_time_exact,
    "A time read from a config, in picoseconds."
);
unit_newtype!(
    Size,
    u64,
    parse_size,
    format_size,
    "A size read from a config, in bytes."
);
unit_newtype!(
    Bandwidth,
    u64,
    parse_bandwidth,
    format_bandwidth,
    "A bandwidth read from a config, in bytes per second."
);

/// A quantity that may be `"unbounded"` (buffers, memory bandwidth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounded<T> {
    Unbounded,
    Limit(T),
}

impl<T> Bounded<T> {
    pub fn limit(&self) -> Option<&T> {
        match self {
            Bounded::Unbounded => None,
            Bounded::Limit(t) => Some(t),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Bounded<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Read as a string first so "unbounded" and "4 GB/s" both work.
        let s = String::deserialize(d)?;
        if s.trim().eq_ignore_ascii_case("unbounded") || s.trim().eq_ignore_ascii_case("infinite") {
            return Ok(Bounded::Unbounded);
        }
        let de: serde::de::value::StrDeserializer<'_, D::Error> =
            serde::de::IntoDeserializer::into_deserializer(s.as_str());
        T::deserialize(de).map(Bounded::Limit)
    }
}

impl<T: Serialize> Serialize for Bounded<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Bounded::Unbounded => s.serialize_str("unbounded"),
            Bounded::Limit(t) => t.serialize(s),
        }
    }
}

/// A router's crossbar rate: `"link"` (each output at its own link's bandwidth, the
/// default) or a bandwidth that caps every output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwitchRate {
    #[default]
    Link,
    Limit(Bandwidth),
}

impl SwitchRate {
    /// The rate a packet leaves on a link of bandwidth `link` (bytes/s).
    pub fn output(self, link: u64) -> u64 {
        match self {
            SwitchRate::Link => link,
            SwitchRate::Limit(b) => b.0.min(link),
        }
    }
}

impl<'de> Deserialize<'de> for SwitchRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim().eq_ignore_ascii_case("link") {
            return Ok(SwitchRate::Link);
        }
        parse_bandwidth(&s)
            .map(|b| SwitchRate::Limit(Bandwidth(b)))
            .map_err(|m| {
                serde::de::Error::custom(format!(
                    "{m} (or \"link\": each output at its link's bandwidth)"
                ))
            })
    }
}

impl Serialize for SwitchRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SwitchRate::Link => s.serialize_str("link"),
            SwitchRate::Limit(b) => b.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn bandwidths_in_bits_as_vendors_quote_them() {
        assert_eq!(parse_bandwidth("200 Gb/s"), Ok(25_000_000_000)); // HDR InfiniBand
        assert_eq!(parse_bandwidth("100Gbit/s"), Ok(12_500_000_000));
        assert_eq!(parse_bandwidth("10 Mb/s"), Ok(1_250_000));
        assert_eq!(parse_bandwidth("1.6 Tb/s"), Ok(200_000_000_000));
        assert_eq!(parse_bandwidth("12 b/s"), Ok(2)); // 1.5 bytes, to the nearest
        assert!(parse_bandwidth("1 b/s")
            .unwrap_err()
            .contains("greater than zero"));
        // Bytes stay bytes.
        assert_eq!(parse_bandwidth("25 GB/s"), Ok(25_000_000_000));
        assert!(parse_bandwidth("4 gb/s").unwrap_err().contains("Gbit/s"));
    }

    use super::*;

    #[test]
    fn times_parse_exactly() {
        assert_eq!(parse_time("128 ns").unwrap(), 128_000);
        assert_eq!(parse_time("0.6 ns").unwrap(), 600);
        assert_eq!(parse_time("0.6ns").unwrap(), 600);
        assert_eq!(parse_time("2.5 us").unwrap(), 2_500_000);
        assert_eq!(parse_time("1 s").unwrap(), PS_PER_S);
        assert_eq!(parse_time("7ps").unwrap(), 7);
        assert!(parse_time("0.5 ps").unwrap_err().contains("whole number"));
        assert!(parse_time("128").unwrap_err().contains("no unit"));
        assert!(parse_time("12 parsecs")
            .unwrap_err()
            .contains("not a time unit"));
        assert!(parse_time("-3 ns").unwrap_err().contains("negative"));
        assert!(parse_time("abc ns").unwrap_err().contains("is not a time"));
        assert!(parse_size("four").unwrap_err().contains("is not a size"));
        assert!(parse_bandwidth("fast")
            .unwrap_err()
            .contains("is not a bandwidth"));
        assert!(parse_time("18446744073709551615ps")
            .unwrap_err()
            .contains("longer than"));
        assert!(parse_size("2 TiB").unwrap_err().contains("larger than"));
    }

    #[test]
    fn sizes_and_bandwidths_parse_exactly() {
        assert_eq!(parse_size("2 KiB").unwrap(), 2048);
        assert_eq!(parse_size("2 MB").unwrap(), 2_000_000);
        assert_eq!(parse_size("48").unwrap(), 48);
        assert_eq!(parse_size("1.5 KiB").unwrap(), 1536);
        assert!(parse_size("0.5 B").is_err());
        assert!(parse_size("-1 B").is_err());
        assert_eq!(parse_bandwidth("4 GB/s").unwrap(), 4_000_000_000);
        assert_eq!(parse_bandwidth("2.8 GB/s").unwrap(), 2_800_000_000);
        assert_eq!(parse_bandwidth("1 GiB/s").unwrap(), 1 << 30);
        assert!(parse_bandwidth("4 GB").is_err());
        assert!(parse_bandwidth("0 GB/s").is_err());
    }

    #[test]
    fn transfer_time_rounds_up() {
        assert_eq!(transfer_time(4, 4_000_000_000), 1_000);
        assert_eq!(transfer_time(1, 3_000_000_000), 334);
        assert_eq!(transfer_time(0, 1), 0);
        // 2 MB at 2.8 GB/s = 714285714.28.. ps, rounded up.
        assert_eq!(transfer_time(2_000_000, 2_800_000_000), 714_285_715);
    }

    #[test]
    fn formats_round_trip() {
        for s in ["128 ns", "0.6 ns", "3 us", "7 ps"] {
            assert_eq!(
                parse_time(&format_time_exact(parse_time(s).unwrap())).unwrap(),
                parse_time(s).unwrap()
            );
        }
        for s in ["4 GB/s", "2.8 GB/s", "123 B/s"] {
            let b = parse_bandwidth(s).unwrap();
            assert_eq!(parse_bandwidth(&format_bandwidth(b)).unwrap(), b);
        }
        assert_eq!(format_size(2048), "2 KiB");
    }

    proptest::proptest! {
        /// The common form's shortcut gives what the general reader gives, or leaves the
        /// text to it; it takes every plain form.
        #[test]
        fn plain_sizes_read_as_the_general_reader_reads_them(s in "[0-9]{0,16}(|B|b|KB|kB|MB|GB|TB|KiB|MiB|GiB|TiB| KB|\\.5KB|e3|x)") {
            if let Some(bytes) = plain_size(&s) {
                proptest::prop_assert_eq!(Ok(bytes), general_size(&s));
            }
            // And it takes every plain form the general reader accepts.
            let plain = s.starts_with(|c: char| c.is_ascii_digit())
                && s.trim_start_matches(|c: char| c.is_ascii_digit()).chars().all(|c| c.is_ascii_alphabetic());
            if plain && general_size(&s).is_ok() {
                proptest::prop_assert!(plain_size(&s).is_some(), "{} left to the general reader", s);
            }
        }
    }
}
