//! Turns an input's bytes into choices; past the end every choice is 0 (the first,
//! simplest option), so every input, however short, is a whole program.

pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    pub fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    pub fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A choice among `n` (n > 0).
    pub fn pick(&mut self, n: usize) -> usize {
        self.byte() as usize % n
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// A size: mostly small, sometimes 0, 1, a page, large, huge or overflowing.
    pub fn size(&mut self) -> usize {
        match self.pick(16) {
            0 => 0,
            1 => 1,
            2 => 4096,
            3 => 1 << (12 + self.pick(9)), // 4 KiB .. 1 MiB
            4 => usize::MAX - self.pick(64),
            5 => 1 << (40 + self.pick(8)),
            _ => 1 + self.u16() as usize % 512,
        }
    }
}
