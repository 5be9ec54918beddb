//! The on-disk form of one checkpoint file, and nothing else: encoding, and a decoding that
//! never misreads a damaged file.
//!
//! Layout: the magic `CAIRNCP1`, a header (id, parent, time, label, roots, whether the body is
//! a full index or a delta against the parent), the body compressed with zstd, and last the
//! SHA-256 of every byte before it. A file whose digest does not match — cut short by a crash,
//! overwritten in part, or not ours — is refused as a whole with [`DecodeError`]; every length
//! read from the file is checked against what is left, so no input makes the decoder panic or
//! allocate more than the file's own size allows.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::index::{Content, Delta, Entry, Hash, Index, NotCovered, Stat, Uncovered};

const MAGIC: &[u8; 8] = b"CAIRNCP1";
const DIGEST_LEN: usize = 32;
/// A body larger than this once decompressed is refused (about 10 million entries).
const MAX_BODY: usize = 1 << 30;

/// The header of a checkpoint file: what listing checkpoints needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub id: u64,
    /// The checkpoint this one's delta applies to; `None` for a full index.
    pub parent: Option<u64>,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    pub label: String,
    pub roots: Vec<PathBuf>,
}

/// The body: a whole index, or the changes from the parent's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Full(Index),
    Delta(Delta, Vec<NotCovered>),
}

/// A body to encode, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum BodyRef<'a> {
    Full(&'a Index),
    Delta(&'a Delta, &'a [NotCovered]),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("not a checkpoint file (bad magic)")]
    Magic,
    #[error("damaged or cut short (digest mismatch)")]
    Digest,
    #[error("malformed: {0}")]
    Malformed(&'static str),
}

pub fn encode(header: &Header, body: BodyRef<'_>) -> std::io::Result<Vec<u8>> {
    let mut h = Vec::new();
    put_u64(&mut h, header.id);
    put_u64(&mut h, header.parent.unwrap_or(0));
    put_u8(&mut h, u8::from(header.parent.is_some()));
    put_u64(&mut h, header.created_ms);
    put_bytes(&mut h, header.label.as_bytes());
    put_u32(&mut h, len32(header.roots.len()));
    for root in &header.roots {
        put_bytes(&mut h, path_bytes(root));
    }
    let mut b = Vec::new();
    match body {
        BodyRef::Full(index) => {
            put_entries(&mut b, index.entries());
            put_u32(&mut b, 0);
            put_not_covered(&mut b, index.not_covered());
        }
        BodyRef::Delta(delta, not_covered) => {
            put_entries(&mut b, &delta.upserts);
            put_u32(&mut b, len32(delta.removals.len()));
            for (root, path) in &delta.removals {
                put_u16(&mut b, *root);
                put_bytes(&mut b, path);
            }
            put_not_covered(&mut b, not_covered);
        }
    }
    let compressed = zstd::bulk::compress(&b, 3)?;
    let mut out = Vec::with_capacity(MAGIC.len() + h.len() + compressed.len() + 64);
    out.extend_from_slice(MAGIC);
    put_bytes(&mut out, &h);
    put_u64(&mut out, b.len() as u64);
    put_bytes(&mut out, &compressed);
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    Ok(out)
}

/// The header alone, after checking the whole file's digest.
pub fn decode_header(file: &[u8]) -> Result<Header, DecodeError> {
    let mut r = verified(file)?;
    read_header(&mut r)
}

pub fn decode(file: &[u8]) -> Result<(Header, Body), DecodeError> {
    let mut r = verified(file)?;
    let header = read_header(&mut r)?;
    let raw_len = usize::try_from(r.u64()?).map_err(|_| DecodeError::Malformed("body size"))?;
    if raw_len > MAX_BODY {
        return Err(DecodeError::Malformed("body too large"));
    }
    let compressed = r.bytes()?;
    let raw = zstd::bulk::decompress(compressed, raw_len)
        .map_err(|_| DecodeError::Malformed("body does not decompress"))?;
    if raw.len() != raw_len {
        return Err(DecodeError::Malformed("body size"));
    }
    let mut b = Reader(&raw);
    let entries = read_entries(&mut b)?;
    let removal_count = b.count(3)?;
    let mut removals = Vec::with_capacity(removal_count);
    for _ in 0..removal_count {
        removals.push((b.u16()?, b.bytes()?.into()));
    }
    let not_covered = read_not_covered(&mut b)?;
    if !b.0.is_empty() {
        return Err(DecodeError::Malformed("trailing bytes in body"));
    }
    let body = match header.parent {
        None if removals.is_empty() => Body::Full(Index::new(entries, not_covered)),
        None => return Err(DecodeError::Malformed("removals in a full index")),
        Some(_) => Body::Delta(
            Delta {
                upserts: entries,
                removals,
            },
            not_covered,
        ),
    };
    Ok((header, body))
}

/// A reader past the magic and the header's length prefix, once the digest matched.
fn verified(file: &[u8]) -> Result<Reader<'_>, DecodeError> {
    if file.len() < MAGIC.len() || &file[..MAGIC.len()] != MAGIC {
        return Err(DecodeError::Magic);
    }
    let Some(split) = file.len().checked_sub(DIGEST_LEN) else {
        return Err(DecodeError::Digest);
    };
    if split < MAGIC.len() {
        return Err(DecodeError::Digest);
    }
    let (content, digest) = file.split_at(split);
    if Sha256::digest(content).as_slice() != digest {
        return Err(DecodeError::Digest);
    }
    Ok(Reader(&content[MAGIC.len()..]))
}

fn read_header(r: &mut Reader<'_>) -> Result<Header, DecodeError> {
    let mut h = Reader(r.bytes()?);
    let id = h.u64()?;
    let parent = h.u64()?;
    let has_parent = h.u8()? != 0;
    let created_ms = h.u64()?;
    let label = String::from_utf8(h.bytes()?.to_vec())
        .map_err(|_| DecodeError::Malformed("label is not UTF-8"))?;
    let root_count = h.count(4)?;
    let mut roots = Vec::with_capacity(root_count);
    for _ in 0..root_count {
        roots.push(bytes_path(h.bytes()?));
    }
    if roots.len() > usize::from(u16::MAX) {
        return Err(DecodeError::Malformed("too many roots"));
    }
    Ok(Header {
        id,
        parent: has_parent.then_some(parent),
        created_ms,
        label,
        roots,
    })
}

const FILE: u8 = 1;
const SYMLINK: u8 = 2;
const DIR: u8 = 3;

fn put_entries(out: &mut Vec<u8>, entries: &[Entry]) {
    put_u32(out, len32(entries.len()));
    for e in entries {
        put_u16(out, e.root);
        put_bytes(out, &e.path);
        put_u64(out, e.stat.size);
        put_u64(out, e.stat.mtime_sec as u64);
        put_u32(out, e.stat.mtime_nsec);
        put_u64(out, e.stat.ino);
        put_u32(out, e.stat.mode);
        match &e.content {
            Content::File(hash) => {
                put_u8(out, FILE);
                out.extend_from_slice(hash);
            }
            Content::Symlink(target) => {
                put_u8(out, SYMLINK);
                put_bytes(out, target);
            }
            Content::Dir => put_u8(out, DIR),
        }
    }
}

fn read_entries(r: &mut Reader<'_>) -> Result<Vec<Entry>, DecodeError> {
    // The smallest entry: root, path length, stat, kind.
    let count = r.count(2 + 4 + 8 + 8 + 4 + 8 + 4 + 1)?;
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let root = r.u16()?;
        let path: Box<[u8]> = r.bytes()?.into();
        let stat = Stat {
            size: r.u64()?,
            mtime_sec: r.u64()? as i64,
            mtime_nsec: r.u32()?,
            ino: r.u64()?,
            mode: r.u32()?,
        };
        let content = match r.u8()? {
            FILE => {
                let mut hash: Hash = [0; 32];
                hash.copy_from_slice(r.take(32)?);
                Content::File(hash)
            }
            SYMLINK => Content::Symlink(r.bytes()?.into()),
            DIR => Content::Dir,
            _ => return Err(DecodeError::Malformed("unknown entry kind")),
        };
        entries.push(Entry {
            root,
            path,
            stat,
            content,
        });
    }
    Ok(entries)
}

fn put_not_covered(out: &mut Vec<u8>, list: &[NotCovered]) {
    put_u32(out, len32(list.len()));
    for n in list {
        put_u16(out, n.root);
        put_bytes(out, &n.path);
        put_u64(out, n.size);
        put_u8(
            out,
            match n.why {
                Uncovered::TooLarge => 1,
                Uncovered::Unreadable => 2,
                Uncovered::Special => 3,
            },
        );
    }
}

fn read_not_covered(r: &mut Reader<'_>) -> Result<Vec<NotCovered>, DecodeError> {
    let count = r.count(2 + 4 + 8 + 1)?;
    let mut list = Vec::with_capacity(count);
    for _ in 0..count {
        let root = r.u16()?;
        let path = r.bytes()?.into();
        let size = r.u64()?;
        let why = match r.u8()? {
            1 => Uncovered::TooLarge,
            2 => Uncovered::Unreadable,
            3 => Uncovered::Special,
            _ => return Err(DecodeError::Malformed("unknown reason")),
        };
        list.push(NotCovered {
            root,
            path,
            size,
            why,
        });
    }
    Ok(list)
}

fn len32(n: usize) -> u32 {
    // Invariant: callers pass lengths of in-memory lists and paths, far below 4 GiB entries.
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}
fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_bytes(out: &mut Vec<u8>, v: &[u8]) {
    put_u32(out, len32(v.len()));
    out.extend_from_slice(v);
}

pub fn path_bytes(p: &std::path::Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes()
}

pub fn bytes_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

/// A cursor over bytes whose every read is bounds-checked.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.0.len() {
            return Err(DecodeError::Malformed("cut short"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// A count of items at least `min_size` bytes each, checked against what is left.
    fn count(&mut self, min_size: usize) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_size) > self.0.len() {
            return Err(DecodeError::Malformed("count larger than the data"));
        }
        Ok(n)
    }
}
