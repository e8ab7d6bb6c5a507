//! `.npy` files (format 1.0–3.0): 2-D, C order, little-endian float32, float16, int8 or
//! uint8.
//!
//! The header is a Python dict literal, e.g.
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 128), }`. It is parsed by a
//! small recursive-descent parser of exactly that syntax (strings, `True`/`False`,
//! tuples of integers), so that a key inside a string, reordered keys or extra spaces
//! cannot be misread, and every malformed header is an error naming what is wrong.

use std::collections::BTreeMap;
use std::path::Path;

use ltokit::{Error, Result};

use super::{bad, DType, Matrix};

/// Longest header accepted (numpy itself writes a few hundred bytes).
const MAX_HEADER_BYTES: usize = 1 << 16;

/// One value of the header dict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    /// A quoted string.
    Str(String),
    /// `True` or `False`.
    Bool(bool),
    /// A tuple of non-negative integers (`()`, `(3,)`, `(2, 3)`).
    Tuple(Vec<u64>),
}

/// Parses the header's dict literal into its keys and values.
pub fn parse_header_dict(text: &str) -> std::result::Result<BTreeMap<String, HeaderValue>, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
    };
    let dict = p.dict()?;
    p.space();
    if p.at != p.s.len() {
        return Err(format!("unexpected text after the dict at byte {}", p.at));
    }
    Ok(dict)
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.s.get(self.at).copied()
    }

    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        match self.peek() {
            Some(x) if x == c => {
                self.at += 1;
                Ok(())
            }
            Some(x) => Err(format!(
                "expected '{}' at byte {}, found '{}'",
                c as char, self.at, x as char
            )),
            None => Err(format!("expected '{}', found the end", c as char)),
        }
    }

    fn dict(&mut self) -> std::result::Result<BTreeMap<String, HeaderValue>, String> {
        self.expect(b'{')?;
        let mut out = BTreeMap::new();
        loop {
            if self.peek() == Some(b'}') {
                self.at += 1;
                return Ok(out);
            }
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.value()?;
            if out.insert(key.clone(), value).is_some() {
                return Err(format!("key '{key}' appears twice"));
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {}
                _ => return Err(format!("expected ',' or '}}' at byte {}", self.at)),
            }
        }
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("expected a quoted string at byte {}", self.at)),
        };
        self.at += 1;
        let start = self.at;
        while let Some(&c) = self.s.get(self.at) {
            if c == quote {
                let text = std::str::from_utf8(&self.s[start..self.at])
                    .map_err(|_| "a string is not UTF-8".to_string())?;
                self.at += 1;
                return Ok(text.to_string());
            }
            if c == b'\\' {
                return Err("escapes in header strings are not supported".into());
            }
            self.at += 1;
        }
        Err("a string is not closed".into())
    }

    fn value(&mut self) -> std::result::Result<HeaderValue, String> {
        match self.peek() {
            Some(b'\'' | b'"') => Ok(HeaderValue::Str(self.string()?)),
            Some(b'(') => Ok(HeaderValue::Tuple(self.tuple()?)),
            Some(_) => {
                for (word, v) in [("True", true), ("False", false)] {
                    if self.s[self.at..].starts_with(word.as_bytes()) {
                        self.at += word.len();
                        return Ok(HeaderValue::Bool(v));
                    }
                }
                Err(format!("unexpected value at byte {}", self.at))
            }
            None => Err("expected a value, found the end".into()),
        }
    }

    fn tuple(&mut self) -> std::result::Result<Vec<u64>, String> {
        self.expect(b'(')?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Some(b')') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(c) if c.is_ascii_digit() => {
                    let start = self.at;
                    while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
                        self.at += 1;
                    }
                    let digits = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                    out.push(
                        digits
                            .parse()
                            .map_err(|_| format!("shape value {digits} is too large"))?,
                    );
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b')') => {}
                        _ => return Err(format!("expected ',' or ')' at byte {}", self.at)),
                    }
                }
                _ => return Err(format!("expected an integer at byte {}", self.at)),
            }
        }
    }
}

/// Parses a `.npy` file (format 1.0–3.0, 2-D, C order, little-endian).
pub fn parse_npy(label: &str, data: &[u8]) -> Result<Matrix> {
    if data.len() < 10 || &data[..6] != b"\x93NUMPY" {
        return Err(bad(label, "not a .npy file (magic missing)"));
    }
    let (header_len, start) = match data[6] {
        1 => (u16::from_le_bytes([data[8], data[9]]) as usize, 10usize),
        2 | 3 if data.len() >= 12 => (
            u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize,
            12,
        ),
        v => {
            return Err(bad(
                label,
                format!(".npy format version {v} is not supported"),
            ))
        }
    };
    if header_len > MAX_HEADER_BYTES {
        return Err(bad(
            label,
            format!(".npy header of {header_len} bytes is implausibly long"),
        ));
    }
    let header = data
        .get(start..start + header_len)
        .ok_or_else(|| bad(label, "truncated .npy header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad(label, ".npy header is not text"))?;
    let dict =
        parse_header_dict(header).map_err(|why| bad(label, format!(".npy header: {why}")))?;
    let dtype = match dict.get("descr") {
        Some(HeaderValue::Str(d)) => match d.as_str() {
            "<f4" => DType::F32,
            "<f2" => DType::F16,
            "|i1" | "<i1" => DType::I8,
            "|u1" | "<u1" => DType::U8,
            other => {
                return Err(bad(
                    label,
                    format!(
                        "element type {other} is not supported (float32, float16, int8, uint8)"
                    ),
                ))
            }
        },
        _ => return Err(bad(label, ".npy header has no descr string")),
    };
    match dict.get("fortran_order") {
        Some(HeaderValue::Bool(false)) => {}
        Some(HeaderValue::Bool(true)) => {
            return Err(bad(
                label,
                "Fortran-order arrays are not supported; save with np.ascontiguousarray",
            ))
        }
        _ => return Err(bad(label, ".npy header has no fortran_order True/False")),
    }
    let (rows, dim) = match dict.get("shape") {
        Some(HeaderValue::Tuple(dims)) => match dims[..] {
            [rows, dim] => (rows, dim),
            _ => return Err(bad(label, format!("shape {dims:?} is not 2-D (rows, dim)"))),
        },
        _ => return Err(bad(label, ".npy header has no shape tuple")),
    };
    let body = &data[start + header_len..];
    let (rows, dim) = (
        usize::try_from(rows).map_err(|_| bad(label, "shape too large"))?,
        usize::try_from(dim).map_err(|_| bad(label, "shape too large"))?,
    );
    let want = rows
        .checked_mul(dim)
        .and_then(|n| n.checked_mul(dtype.size()))
        .ok_or_else(|| bad(label, "shape too large"))?;
    if body.len() != want {
        return Err(bad(
            label,
            format!(
                "holds {} data bytes, the shape needs {want} (truncated?)",
                body.len()
            ),
        ));
    }
    Matrix::new(dtype, rows, dim, body.to_vec()).map_err(|e| bad(label, e.to_string()))
}

/// Writes a matrix as `.npy` (format 1.0).
pub fn write_npy(path: &Path, m: &Matrix) -> Result<()> {
    let descr = match m.dtype {
        DType::F32 => "<f4",
        DType::F16 => "<f2",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
    };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({}, {}), }}",
        m.rows, m.dim
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&m.bytes);
    std::fs::write(path, out).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{read_vectors, synthetic};

    fn npy(header: &str, body: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn round_trip_every_type() {
        let dir = std::env::temp_dir().join(format!("ltokit-ivf-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for dtype in DType::ALL {
            let m = synthetic(7, 5, 2, dtype, 3);
            let p = dir.join(format!("{}.npy", dtype.name()));
            write_npy(&p, &m).unwrap();
            assert_eq!(read_vectors(&p).unwrap(), m);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn headers_are_parsed_not_searched() {
        let body = [1u8, 2, 3, 4, 5, 6];
        // Keys in another order, double quotes, no trailing comma: still (2, 3) u8.
        let m = parse_npy(
            "a.npy",
            &npy(
                "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": '|u1'}\n",
                &body,
            ),
        )
        .unwrap();
        assert_eq!((m.rows, m.dim, m.dtype), (2, 3, DType::U8));
        // A key name inside a string value is not a key.
        let tricky =
            "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), 'note': 'shape': (9, 9)}";
        assert!(parse_npy("a.npy", &npy(tricky, &body)).is_err());
        let tricky = "{'descr': '|u1', 'fortran_order': False, 'note': \"'shape': (1, 6)\", 'shape': (2, 3)}";
        let m = parse_npy("a.npy", &npy(tricky, &body)).unwrap();
        assert_eq!((m.rows, m.dim), (2, 3));
    }

    #[test]
    fn malformed_headers_say_what_is_wrong() {
        let body = [0u8; 6];
        for (header, why) in [
            ("{'descr': '|u1', 'shape': (2, 3), }", "fortran_order"),
            ("{'descr': '|u1', 'fortran_order': False, }", "shape"),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                "<f8",
            ),
            (
                "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
                "Fortran",
            ),
            (
                "{'descr': '|u1', 'fortran_order': False, 'shape': (6,), }",
                "2-D",
            ),
            ("{'descr': '|u1', 'descr': '|u1', }", "twice"),
            ("{'descr': '|u1' 'shape': (2, 3)}", "expected ','"),
            (
                "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3)} x",
                "after the dict",
            ),
            ("{'de", "not closed"),
        ] {
            let err = parse_npy("a.npy", &npy(header, &body))
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{header}: {err}");
        }
        let ok = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }";
        let err = parse_npy("a.npy", &npy(ok, &body[..5]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("truncated"), "{err}");
    }
}
