//! Solid zstd blocks: many small items (cubins, LTO-IR) compressed together so that
//! zstd can see what they share, read back one item at a time.
//!
//! A payload is a run of blocks, each one zstd frame holding the concatenation of its
//! items. An item is found by a [`Slot`]: its block, its byte range inside the
//! decompressed block, and the BLAKE3 of its bytes (checked on every read). Reading an
//! item decompresses only its own block, and only up to the item's end; a
//! [`BlockReader`] keeps the most recently decompressed blocks so that neighbouring
//! items cost one decompression.
//!
//! Items are placed in the order they are pushed; a block is sealed when the next item
//! would take it past the writer's raw-size budget, or when the caller seals it (to keep
//! unlike items apart). Similar items pushed next to each other compress best.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::digest::Digest;
use crate::error::{Error, Result};

/// zstd level of blocks (and of compressed manifests).
pub const LEVEL: i32 = 19;
/// Largest decompressed block ltokit accepts (256 MiB).
pub const MAX_BLOCK_BYTES: u64 = 256 << 20;
/// How many decompressed blocks a reader keeps.
const CACHED_BLOCKS: usize = 2;

/// One zstd frame of a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Block {
    /// Offset of the frame in the payload.
    pub offset: u64,
    /// Compressed size.
    pub stored_bytes: u64,
    /// Decompressed size (the sum of its items).
    pub raw_bytes: u64,
}

/// Where one item lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    /// Index of its block.
    pub block: u32,
    /// Offset inside the decompressed block.
    pub offset: u64,
    /// Size of the item.
    pub raw_bytes: u64,
    /// BLAKE3 of the item.
    pub digest: Digest,
}

/// Writes items into solid blocks of at most `budget` raw bytes (an item larger than the
/// budget gets a block of its own).
pub struct BlockWriter {
    budget: u64,
    sealed: Vec<Vec<u8>>,
    open: Vec<u8>,
}

impl BlockWriter {
    /// A writer whose blocks hold at most `budget` raw bytes.
    pub fn new(budget: u64) -> BlockWriter {
        BlockWriter {
            budget: budget.max(1),
            sealed: Vec::new(),
            open: Vec::new(),
        }
    }

    /// Appends `item`, sealing the open block first when `item` would overflow it.
    pub fn push(&mut self, item: &[u8]) -> Slot {
        if !self.open.is_empty() && (self.open.len() + item.len()) as u64 > self.budget {
            self.seal();
        }
        let slot = Slot {
            block: self.sealed.len() as u32,
            offset: self.open.len() as u64,
            raw_bytes: item.len() as u64,
            digest: Digest::of(item),
        };
        self.open.extend_from_slice(item);
        slot
    }

    /// Ends the open block, so the next item starts a new one.
    pub fn seal(&mut self) {
        if !self.open.is_empty() {
            self.sealed.push(std::mem::take(&mut self.open));
        }
    }

    /// Compresses every block (`jobs` at a time, 0 = one per core) into one payload.
    pub fn finish(mut self, jobs: usize) -> Result<(Vec<u8>, Vec<Block>)> {
        self.seal();
        let frames = crate::parallel::try_map(&self.sealed, jobs, |raw| {
            zstd::bulk::compress(raw, LEVEL).map_err(|source| Error::Compress {
                what: format!("a block of {} bytes", raw.len()),
                source,
            })
        })?;
        let mut payload = Vec::with_capacity(frames.iter().map(Vec::len).sum());
        let mut blocks = Vec::with_capacity(frames.len());
        for (frame, raw) in frames.iter().zip(&self.sealed) {
            blocks.push(Block {
                offset: payload.len() as u64,
                stored_bytes: frame.len() as u64,
                raw_bytes: raw.len() as u64,
            });
            payload.extend_from_slice(frame);
        }
        Ok((payload, blocks))
    }
}

/// Where a reader gets a block's compressed bytes from: a payload in memory, or a file
/// read on demand.
pub trait BlockSource {
    /// The `block.stored_bytes` bytes at `block.offset` of the payload.
    fn stored(&self, block: &Block) -> std::result::Result<Cow<'_, [u8]>, String>;
}

impl BlockSource for [u8] {
    fn stored(&self, block: &Block) -> std::result::Result<Cow<'_, [u8]>, String> {
        let start = usize::try_from(block.offset).map_err(|_| "the block lies outside the file")?;
        let end = start
            .checked_add(block.stored_bytes as usize)
            .ok_or("the block lies outside the file")?;
        self.get(start..end)
            .map(Cow::Borrowed)
            .ok_or_else(|| "the block lies outside the file".to_string())
    }
}

/// Reads items out of a payload's blocks, keeping the latest decompressed ones.
pub struct BlockReader {
    blocks: Vec<Block>,
    /// Most recent first: a block index and a decompressed prefix of it.
    cache: Mutex<Vec<(u32, Arc<Vec<u8>>)>>,
}

impl std::fmt::Debug for BlockReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockReader({} blocks)", self.blocks.len())
    }
}

impl BlockReader {
    /// A reader of `blocks`, after checking that each lies inside a payload of
    /// `payload_len` bytes; the error says what is wrong, for the caller to wrap.
    pub fn new(blocks: Vec<Block>, payload_len: u64) -> std::result::Result<Self, String> {
        for (i, b) in blocks.iter().enumerate() {
            let end = b.offset.checked_add(b.stored_bytes);
            if end.is_none_or(|end| end > payload_len) || b.stored_bytes == 0 {
                return Err(format!("block #{i} lies outside the payload"));
            }
            if b.raw_bytes > MAX_BLOCK_BYTES {
                return Err(format!(
                    "block #{i} claims {} bytes decompressed (at most {MAX_BLOCK_BYTES})",
                    b.raw_bytes
                ));
            }
        }
        Ok(BlockReader {
            blocks,
            cache: Mutex::new(Vec::new()),
        })
    }

    /// The blocks.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Checks that `slot` names a block and lies inside it.
    pub fn check(&self, slot: &Slot) -> std::result::Result<(), String> {
        let block = self
            .blocks
            .get(slot.block as usize)
            .ok_or_else(|| format!("names block #{} of {}", slot.block, self.blocks.len()))?;
        let end = slot.offset.checked_add(slot.raw_bytes);
        if end.is_none_or(|end| end > block.raw_bytes) {
            return Err(format!("lies outside its block #{}", slot.block));
        }
        Ok(())
    }

    /// The bytes of `slot`, from `payload` (whose first byte the blocks' offsets count
    /// from), checked against the slot's digest.
    pub fn read(
        &self,
        payload: &(impl BlockSource + ?Sized),
        slot: &Slot,
    ) -> std::result::Result<Vec<u8>, String> {
        self.check(slot)?;
        let end = (slot.offset + slot.raw_bytes) as usize;
        let prefix = self.prefix(payload, slot.block, end)?;
        let item = &prefix[slot.offset as usize..end];
        if Digest::of(item) != slot.digest {
            return Err("does not match its digest (the file is corrupt)".into());
        }
        Ok(item.to_vec())
    }

    /// At least the first `len` decompressed bytes of block `index`.
    fn prefix(
        &self,
        payload: &(impl BlockSource + ?Sized),
        index: u32,
        len: usize,
    ) -> std::result::Result<Arc<Vec<u8>>, String> {
        let mut cache = self.cache.lock();
        if let Some(at) = cache
            .iter()
            .position(|(i, bytes)| *i == index && bytes.len() >= len)
        {
            let hit = cache.remove(at);
            let bytes = Arc::clone(&hit.1);
            cache.insert(0, hit);
            return Ok(bytes);
        }
        // A second read beyond a cached prefix suggests a walk through the block:
        // decompress all of it once rather than ever longer prefixes.
        let walking = cache.iter().any(|(i, _)| *i == index);
        drop(cache);
        let block = self.blocks[index as usize];
        let len = if walking {
            block.raw_bytes as usize
        } else {
            len
        };
        let stored = payload.stored(&block)?;
        // Only as far as the item ends: a block's first items cost less than its last.
        let mut out = vec![0u8; len];
        let mut decoder = zstd::stream::read::Decoder::with_buffer(&stored[..])
            .map_err(|e| format!("cannot decompress block #{index}: {e}"))?;
        decoder
            .read_exact(&mut out)
            .map_err(|e| format!("cannot decompress block #{index}: {e}"))?;
        let bytes = Arc::new(out);
        let mut cache = self.cache.lock();
        cache.retain(|(i, _)| *i != index);
        cache.insert(0, (index, Arc::clone(&bytes)));
        cache.truncate(CACHED_BLOCKS);
        Ok(bytes)
    }
}

/// Compresses a manifest (or any metadata) as one zstd frame.
pub fn compress(what: &str, raw: &[u8]) -> Result<Vec<u8>> {
    zstd::bulk::compress(raw, LEVEL).map_err(|source| Error::Compress {
        what: what.to_string(),
        source,
    })
}

/// Decompresses one zstd frame of at most `limit` bytes; the error says what is wrong.
pub fn decompress(stored: &[u8], limit: usize) -> std::result::Result<Vec<u8>, String> {
    // The frame header records the size; one exact allocation, one pass.
    let size = match zstd::zstd_safe::get_frame_content_size(stored) {
        Ok(Some(size)) => size,
        Ok(None) => return Err("cannot decompress: the frame does not record its size".into()),
        Err(_) => return Err("cannot decompress: not a zstd frame".into()),
    };
    if size > limit as u64 {
        return Err(format!("decompresses to more than {limit} bytes"));
    }
    let out = zstd::bulk::decompress(stored, size as usize)
        .map_err(|e| format!("cannot decompress: {e}"))?;
    if out.len() as u64 != size {
        return Err("cannot decompress: the frame is shorter than its header says".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Vec<Vec<u8>> {
        (0..10u8)
            .map(|i| {
                (0..1000 + 37 * i as usize)
                    .map(|j| (j % 251) as u8 ^ i)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn items_round_trip_across_blocks_in_any_order() {
        let items = items();
        let mut w = BlockWriter::new(3000);
        let slots: Vec<Slot> = items.iter().map(|it| w.push(it)).collect();
        let (payload, blocks) = w.finish(2).unwrap();
        assert!(blocks.len() >= 4, "the budget splits blocks: {blocks:?}");
        assert!(blocks.iter().all(|b| b.raw_bytes <= 3000));
        let r = BlockReader::new(blocks, payload.len() as u64).unwrap();
        for i in [9, 0, 5, 4, 1, 8, 2, 3, 7, 6] {
            assert_eq!(r.read(&payload[..], &slots[i]).unwrap(), items[i]);
        }
    }

    #[test]
    fn seal_keeps_items_apart_and_large_items_get_their_own_block() {
        let mut w = BlockWriter::new(10_000);
        let a = w.push(&[1; 100]);
        w.seal();
        let b = w.push(&[2; 50_000]);
        let c = w.push(&[3; 10]);
        assert_eq!((a.block, b.block, c.block), (0, 1, 2));
        assert_eq!(c.offset, 0);
    }

    #[test]
    fn damage_is_named() {
        let items = items();
        let mut w = BlockWriter::new(1 << 20);
        let slots: Vec<Slot> = items.iter().map(|it| w.push(it)).collect();
        let (payload, blocks) = w.finish(1).unwrap();
        let r = BlockReader::new(blocks.clone(), payload.len() as u64).unwrap();
        let wrong = Slot {
            digest: Digest::of(b"x"),
            ..slots[3]
        };
        assert!(r.read(&payload[..], &wrong).unwrap_err().contains("digest"));
        let outside = Slot {
            offset: blocks[0].raw_bytes,
            ..slots[3]
        };
        assert!(r
            .read(&payload[..], &outside)
            .unwrap_err()
            .contains("outside"));
        let no_block = Slot {
            block: 7,
            ..slots[3]
        };
        assert!(r
            .read(&payload[..], &no_block)
            .unwrap_err()
            .contains("block #7"));
        assert!(BlockReader::new(blocks.clone(), payload.len() as u64 - 1).is_err());
        // A flipped byte in the frame: zstd's own check or the digest refuses the items it
        // touched; no item ever comes back different.
        let mut bad = payload.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x40;
        let fresh = BlockReader::new(blocks, bad.len() as u64).unwrap();
        let mut refused = 0;
        for (slot, item) in slots.iter().zip(&items).rev() {
            match fresh.read(&bad[..], slot) {
                Ok(bytes) => assert_eq!(&bytes, item),
                Err(_) => refused += 1,
            }
        }
        assert!(refused > 0);
    }

    #[test]
    fn decompress_enforces_its_limit() {
        let packed = compress("test", &[5; 10_000]).unwrap();
        assert_eq!(decompress(&packed, 10_000).unwrap().len(), 10_000);
        assert!(decompress(&packed, 9_999)
            .unwrap_err()
            .contains("more than"));
        assert!(decompress(b"not zstd", 100).is_err());
    }
}
