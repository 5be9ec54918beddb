//! Checkpoint files as someone who edits them would: read, change and write back with a
//! fresh digest (a plain SHA-256 anyone can recompute), written from the format alone so the
//! tests build tampered stores without the code under test. Layout: `CAIRNCP1`, a header
//! (id, parent, time, label, roots), the zstd body (entries, removals, files not covered),
//! the SHA-256 of everything before it.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
pub enum Content {
    File([u8; 32]),
    Symlink(Vec<u8>),
    Dir,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub root: u16,
    pub path: Vec<u8>,
    /// size, mtime seconds, mtime nanoseconds, inode, mode: kept as they were.
    pub size: u64,
    pub mtime: u64,
    pub nsec: u32,
    pub ino: u64,
    pub mode: u32,
    pub content: Content,
}

#[derive(Debug, Clone)]
pub struct CpFile {
    pub id: u64,
    pub parent: Option<u64>,
    pub created_ms: u64,
    pub label: String,
    pub roots: Vec<Vec<u8>>,
    pub entries: Vec<Entry>,
    pub removals: Vec<(u16, Vec<u8>)>,
    /// Root, path, size, why (1 too large, 2 unreadable, 3 special).
    pub not_covered: Vec<(u16, Vec<u8>, u64, u8)>,
}

struct R<'a>(&'a [u8]);
impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take(2).try_into().unwrap())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn bytes(&mut self) -> Vec<u8> {
        let n = self.u32() as usize;
        self.take(n).to_vec()
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

impl CpFile {
    pub fn read(path: &Path) -> CpFile {
        Self::read_whole(path).expect("a whole checkpoint file")
    }

    /// The file, unless its digest does not match (damaged, or cut short).
    pub fn read_whole(path: &Path) -> Option<CpFile> {
        let file = fs::read(path).ok()?;
        let (content, digest) = file.split_at(file.len().checked_sub(32)?);
        if !content.starts_with(b"CAIRNCP1") || Sha256::digest(content).as_slice() != digest {
            return None;
        }
        let mut r = R(&file[8..file.len() - 32]);
        let header = r.bytes();
        let raw_len = r.u64() as usize;
        let compressed = r.bytes();
        let mut h = R(&header);
        let id = h.u64();
        let parent = h.u64();
        let has_parent = h.u8() != 0;
        let created_ms = h.u64();
        let label = String::from_utf8(h.bytes()).unwrap();
        let roots = (0..h.u32()).map(|_| h.bytes()).collect();
        let raw = zstd::bulk::decompress(&compressed, raw_len).unwrap();
        let mut b = R(&raw);
        let entries = (0..b.u32())
            .map(|_| Entry {
                root: b.u16(),
                path: b.bytes(),
                size: b.u64(),
                mtime: b.u64(),
                nsec: b.u32(),
                ino: b.u64(),
                mode: b.u32(),
                content: match b.u8() {
                    1 => Content::File(b.take(32).try_into().unwrap()),
                    2 => Content::Symlink(b.bytes()),
                    _ => Content::Dir,
                },
            })
            .collect();
        let removals = (0..b.u32()).map(|_| (b.u16(), b.bytes())).collect();
        let not_covered = (0..b.u32())
            .map(|_| (b.u16(), b.bytes(), b.u64(), b.u8()))
            .collect();
        Some(CpFile {
            id,
            parent: has_parent.then_some(parent),
            created_ms,
            label,
            roots,
            entries,
            removals,
            not_covered,
        })
    }

    /// Writes the file back, with a digest that matches.
    pub fn write(&self, path: &Path) {
        let mut h = Vec::new();
        h.extend_from_slice(&self.id.to_le_bytes());
        h.extend_from_slice(&self.parent.unwrap_or(0).to_le_bytes());
        h.push(u8::from(self.parent.is_some()));
        h.extend_from_slice(&self.created_ms.to_le_bytes());
        put_bytes(&mut h, self.label.as_bytes());
        h.extend_from_slice(&(self.roots.len() as u32).to_le_bytes());
        for root in &self.roots {
            put_bytes(&mut h, root);
        }
        let mut b = Vec::new();
        b.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            b.extend_from_slice(&e.root.to_le_bytes());
            put_bytes(&mut b, &e.path);
            b.extend_from_slice(&e.size.to_le_bytes());
            b.extend_from_slice(&e.mtime.to_le_bytes());
            b.extend_from_slice(&e.nsec.to_le_bytes());
            b.extend_from_slice(&e.ino.to_le_bytes());
            b.extend_from_slice(&e.mode.to_le_bytes());
            match &e.content {
                Content::File(hash) => {
                    b.push(1);
                    b.extend_from_slice(hash);
                }
                Content::Symlink(t) => {
                    b.push(2);
                    put_bytes(&mut b, t);
                }
                Content::Dir => b.push(3),
            }
        }
        b.extend_from_slice(&(self.removals.len() as u32).to_le_bytes());
        for (root, path) in &self.removals {
            b.extend_from_slice(&root.to_le_bytes());
            put_bytes(&mut b, path);
        }
        b.extend_from_slice(&(self.not_covered.len() as u32).to_le_bytes());
        for (root, path, size, why) in &self.not_covered {
            b.extend_from_slice(&root.to_le_bytes());
            put_bytes(&mut b, path);
            b.extend_from_slice(&size.to_le_bytes());
            b.push(*why);
        }
        let compressed = zstd::bulk::compress(&b, 3).unwrap();
        let mut out = b"CAIRNCP1".to_vec();
        put_bytes(&mut out, &h);
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        put_bytes(&mut out, &compressed);
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        fs::write(path, out).unwrap();
    }

    /// The entry whose path is `rel`.
    pub fn entry_mut(&mut self, rel: &str) -> &mut Entry {
        self.entries
            .iter_mut()
            .find(|e| e.path == rel.as_bytes())
            .unwrap_or_else(|| panic!("no entry {rel}"))
    }
}

/// The file of checkpoint `id` in the store at `data`.
pub fn cp_path(data: &Path, id: u64) -> std::path::PathBuf {
    data.join("checkpoints").join(format!("{id:010}.cp"))
}

/// Reads checkpoint `id`, lets `change` edit it, writes it back with a valid digest (a file
/// already damaged is left as it is).
pub fn tamper(data: &Path, id: u64, change: impl FnOnce(&mut CpFile)) {
    let path = cp_path(data, id);
    if let Some(mut file) = CpFile::read_whole(&path) {
        change(&mut file);
        file.write(&path);
    }
}
