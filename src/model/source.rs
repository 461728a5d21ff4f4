//! Where the text of a history lives after reading, to re-read its ops.

use super::{mapped, Span};
use crate::edn::count_newlines;

/// Where the text of a history lives after reading.
#[derive(Debug, Clone)]
pub enum SourceText {
    /// In memory (small files, standard input).
    Bytes(std::sync::Arc<Vec<u8>>),
    /// In a file, re-read by span when an op is printed; large histories are
    /// not kept in memory, which bounds peak memory to the model's size.
    File(std::path::PathBuf),
    /// A file read through a mapping, kept to print ops: its pages are the
    /// page cache's, so the history holds no copy of its text.
    Mapped(std::sync::Arc<mapped::FileBytes>),
}

impl Default for SourceText {
    fn default() -> Self {
        SourceText::Bytes(Default::default())
    }
}

impl SourceText {
    /// The whole text when it is in memory or mapped (empty for
    /// [`SourceText::File`], whose text is read op by op).
    pub fn in_memory(&self) -> &[u8] {
        match self {
            SourceText::Bytes(b) => b,
            SourceText::Mapped(m) => m.bytes(),
            SourceText::File(_) => &[],
        }
    }

    /// The newlines before byte `offset` (as many as can be read).
    pub fn newlines_before(&self, offset: u64) -> u64 {
        match self {
            SourceText::File(path) => newlines_in_file(path, offset),
            text => {
                let bytes = text.in_memory();
                count_newlines(&bytes[..bytes.len().min(offset as usize)]) as u64
            }
        }
    }

    /// The bytes of `span` (empty if they can no longer be read).
    pub fn slice(&self, span: Span) -> std::borrow::Cow<'_, [u8]> {
        use std::borrow::Cow;
        let (start, end) = (span.start as usize, span.start as usize + span.len as usize);
        match self {
            SourceText::Bytes(b) => Cow::Borrowed(b.get(start..end).unwrap_or(&[])),
            SourceText::Mapped(m) => Cow::Borrowed(m.bytes().get(start..end).unwrap_or(&[])),
            SourceText::File(path) => {
                use std::io::{Read, Seek, SeekFrom};
                let mut buf = vec![0u8; span.len as usize];
                let ok = std::fs::File::open(path).and_then(|mut f| {
                    f.seek(SeekFrom::Start(span.start))?;
                    f.read_exact(&mut buf)
                });
                Cow::Owned(if ok.is_ok() { buf } else { Vec::new() })
            }
        }
    }
}

/// The newlines in the first `end` bytes of the file at `path` (read in
/// blocks; as many as could be read).
fn newlines_in_file(path: &std::path::Path, end: u64) -> u64 {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return 0;
    };
    let mut rest = file.take(end);
    let mut block = vec![0u8; 1 << 20];
    let mut newlines = 0;
    while let Ok(n @ 1..) = rest.read(&mut block) {
        newlines += count_newlines(&block[..n]) as u64;
    }
    newlines
}
