//! Rows in the text format of `COPY ... FROM STDIN`: tab between columns, a newline after each
//! row, `\N` for NULL, backslash escapes in text, `\x` hex for `bytea`.

use super::enc;

/// Rows of one table, ready for `COPY`.
#[derive(Default)]
pub struct CopyRows {
    buf: Vec<u8>,
    /// The row being written has a column already.
    started: bool,
    rows: usize,
}

impl CopyRows {
    fn sep(&mut self) {
        if self.started {
            self.buf.push(b'\t');
        }
        self.started = true;
    }

    pub fn int(&mut self, v: i64) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(v.to_string().as_bytes());
        self
    }

    pub fn opt_int(&mut self, v: Option<i64>) -> &mut Self {
        match v {
            Some(v) => self.int(v),
            None => self.null(),
        }
    }

    pub fn opt_real(&mut self, v: Option<f64>) -> &mut Self {
        match v {
            Some(v) => {
                self.sep();
                self.buf.extend_from_slice(v.to_string().as_bytes());
                self
            }
            None => self.null(),
        }
    }

    pub fn null(&mut self) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(b"\\N");
        self
    }

    pub fn text(&mut self, s: &str) -> &mut Self {
        self.stored(&enc(s))
    }

    /// Text already as stored (through [`enc`]): only escaped for `COPY`.
    pub fn stored(&mut self, s: &str) -> &mut Self {
        self.sep();
        self.buf.reserve(s.len());
        let mut from = 0;
        let bytes = s.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let escaped: &[u8] = match b {
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                _ => continue,
            };
            self.buf.extend_from_slice(&bytes[from..i]);
            self.buf.extend_from_slice(escaped);
            from = i + 1;
        }
        self.buf.extend_from_slice(&bytes[from..]);
        self
    }

    pub fn opt_text(&mut self, s: Option<&str>) -> &mut Self {
        match s {
            Some(s) => self.text(s),
            None => self.null(),
        }
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.sep();
        self.buf.reserve(3 + 2 * b.len());
        self.buf.extend_from_slice(b"\\\\x");
        for &byte in b {
            self.buf.push(HEX[usize::from(byte >> 4)]);
            self.buf.push(HEX[usize::from(byte & 15)]);
        }
        self
    }

    /// End the row.
    pub fn end(&mut self) {
        self.buf.push(b'\n');
        self.started = false;
        self.rows += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Bytes gathered.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn data(&self) -> &[u8] {
        &self.buf
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.started = false;
        self.rows = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_escaped_as_copy_reads_them() {
        let mut rows = CopyRows::default();
        rows.int(7).text("a\tb\\c\nd\re").null().opt_real(Some(0.5)).bytes(&[0, 255]).end();
        rows.text("x\0y").end();
        assert_eq!(String::from_utf8_lossy(rows.data()), "7\ta\\tb\\\\c\\nd\\re\t\\N\t0.5\t\\\\x00ff\nx\u{10FFFF}0y\n");
    }
}
