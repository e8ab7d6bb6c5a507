//! Page-locked (pinned) host memory that stages copies between the host and a GPU.
//!
//! A copy from ordinary (pageable) memory goes through the driver's own small pinned
//! buffers one piece at a time, on the calling thread; a copy from pinned memory is a
//! single transfer at the link's speed that runs while the host does other work. A
//! [`PinnedStaging`] is a grow-only pinned buffer kept across calls:
//! [`PinnedStaging::upload`] copies the caller's data into it in chunks, on several threads
//! for large inputs, and starts each chunk's transfer as soon as that chunk is in place;
//! [`PinnedStaging::start_download`] enqueues a device-to-host transfer and
//! [`PinnedStaging::finish_download`] waits for it and hands the data back, so that several
//! downloads share one wait.
//!
//! The staging is reused only after the GPU is done with it: each transfer records an
//! event, and the host waits on it before writing or reading the buffer again.

use std::sync::mpsc;

use cudarc::driver::{sys, CudaEvent, CudaView, CudaViewMut, PinnedHostSlice, ValidAsZeroBits};

use crate::error::{Error, Result};
use crate::launch::{DeviceElem, Gpu};

/// Bytes each staged upload chunk holds: its transfer starts while the next is copied.
const CHUNK_BYTES: usize = 1 << 20;

/// Inputs at least this large are copied into the staging on several threads (one
/// thread's copy runs at a fraction of the host's memory bandwidth).
const PARALLEL_COPY_BYTES: usize = 2 * CHUNK_BYTES;

/// The most threads an upload copies on.
const MAX_COPY_THREADS: usize = 4;

/// Which way a staging buffer's data goes (it decides how the memory is mapped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// Host to device: write-combined memory (fast for the host to write and the device
    /// to read, slow for the host to read).
    Upload,
    /// Device to host: ordinary cached pinned memory.
    Download,
}

/// A grow-only page-locked host buffer for copies in one direction, with the event that
/// says when the GPU is done with it. See the module documentation.
pub struct PinnedStaging<T: DeviceElem + ValidAsZeroBits + Copy + Send + Sync> {
    direction: Direction,
    buffer: Option<PinnedHostSlice<T>>,
    /// Recorded after the last transfer that uses `buffer` (created at the first).
    event: Option<CudaEvent>,
    /// Whether `event` was recorded since the host last waited on it.
    in_flight: bool,
    /// Elements of the download in flight.
    pending: usize,
}

impl<T: DeviceElem + ValidAsZeroBits + Copy + Send + Sync> PinnedStaging<T> {
    /// An empty staging for host-to-device copies (allocated at the first upload).
    pub fn for_uploads() -> Self {
        Self::new(Direction::Upload)
    }

    /// An empty staging for device-to-host copies (allocated at the first download).
    pub fn for_downloads() -> Self {
        Self::new(Direction::Download)
    }

    fn new(direction: Direction) -> Self {
        PinnedStaging {
            direction,
            buffer: None,
            event: None,
            in_flight: false,
            pending: 0,
        }
    }

    /// Waits until the GPU no longer reads or writes the buffer.
    fn wait(&mut self) -> Result<()> {
        if let Some(event) = self.event.as_ref().filter(|_| self.in_flight) {
            event
                .synchronize()
                .map_err(|e| Error::Driver(format!("waiting for a pinned-memory copy: {e}")))?;
        }
        self.in_flight = false;
        Ok(())
    }

    /// The buffer, at least `len` elements long, free of transfers, as a host slice.
    fn host_slice(&mut self, gpu: &Gpu, len: usize) -> Result<&mut [T]> {
        self.wait()?;
        let len = len.max(1);
        if self.buffer.as_ref().is_none_or(|b| b.len() < len) {
            self.buffer = None; // free before allocating the larger one
            let flags = match self.direction {
                Direction::Upload => sys::CU_MEMHOSTALLOC_WRITECOMBINED,
                Direction::Download => 0,
            };
            // SAFETY: cuMemHostAlloc of `len` elements; the memory is not read before it
            // is zeroed just below.
            let mut buffer = unsafe { gpu.context().alloc_pinned_with_flags::<T>(len, flags) }
                .map_err(|e| {
                    Error::Driver(format!(
                        "allocating {} bytes of pinned host memory: {e}; lower the batch size \
                         or raise the locked-memory limit (ulimit -l)",
                        len * size_of::<T>()
                    ))
                })?;
            let ptr = buffer.as_mut_ptr().map_err(pinned_error)?;
            // SAFETY: `ptr` is the start of the allocation of `len` elements just made and
            // nothing else refers to it; all-zero bytes are a valid T (ValidAsZeroBits).
            unsafe { std::ptr::write_bytes(ptr, 0, len) };
            self.buffer = Some(buffer);
        }
        let buffer = self
            .buffer
            .as_mut()
            .ok_or_else(|| Error::Driver("no pinned staging buffer".into()))?;
        buffer.as_mut_slice().map_err(pinned_error)
    }

    /// Copies `host` into `device` (at least as long) through the staging: in chunks of
    /// 1 MiB, copied into pinned memory on up to four threads for inputs of 2 MiB or more,
    /// each chunk's transfer enqueued on the GPU's stream as soon as it is in place.
    /// Returns once every transfer is enqueued; the stream orders them before any later
    /// work on it.
    pub fn upload(&mut self, gpu: &Gpu, host: &[T], device: &mut CudaViewMut<T>) -> Result<()> {
        if self.direction != Direction::Upload {
            return Err(Error::InvalidArgument(
                "a download staging cannot upload".into(),
            ));
        }
        if host.len() > device.len() {
            return Err(Error::InvalidArgument(format!(
                "{} elements do not fit a device buffer of {}",
                host.len(),
                device.len()
            )));
        }
        if host.is_empty() {
            return Ok(());
        }
        let stream = gpu.stream().clone();
        let staged = self.host_slice(gpu, host.len())?;
        let chunk = (CHUNK_BYTES / size_of::<T>()).max(1);
        let n_chunks = host.len().div_ceil(chunk);
        let bytes = std::mem::size_of_val(host);
        let threads = if bytes < PARALLEL_COPY_BYTES {
            1
        } else {
            crate::parallel::threads(0, n_chunks.min(MAX_COPY_THREADS))
        };
        // Each chunk's transfer reads pinned memory after this call returns: the
        // staging's event, recorded below, keeps the host from writing it before then.
        let mut enqueue = |c: usize, part: &[T]| -> Result<()> {
            let start = c * chunk;
            let mut dst = device.slice_mut(start..start + part.len());
            stream
                .memcpy_htod(part, &mut dst)
                .map_err(|e| Error::Driver(format!("upload through pinned memory: {e}")))
        };
        let parts: Vec<&mut [T]> = staged[..host.len()].chunks_mut(chunk).collect();
        let mut result = Ok(());
        if threads == 1 {
            for (c, part) in parts.into_iter().enumerate() {
                part.copy_from_slice(&host[c * chunk..c * chunk + part.len()]);
                result = enqueue(c, part);
                if result.is_err() {
                    break;
                }
            }
        } else {
            let (sender, receiver) = mpsc::channel::<(usize, &[T])>();
            let work = parking_lot::Mutex::new(parts.into_iter().enumerate());
            std::thread::scope(|s| {
                for _ in 0..threads {
                    let sender = sender.clone();
                    let work = &work;
                    s.spawn(move || loop {
                        let Some((c, part)) = work.lock().next() else {
                            break;
                        };
                        part.copy_from_slice(&host[c * chunk..c * chunk + part.len()]);
                        let part: &[T] = part;
                        if sender.send((c, part)).is_err() {
                            break;
                        }
                    });
                }
                drop(sender);
                for (c, part) in receiver {
                    if result.is_ok() {
                        result = enqueue(c, part);
                    }
                }
            });
        }
        // Recorded even after a failed chunk: those before it may still be in flight.
        self.record(gpu)?;
        result
    }

    /// Enqueues the copy of `device` into the staging; [`Self::finish_download`] waits
    /// for it and returns the data.
    pub fn start_download(&mut self, gpu: &Gpu, device: &CudaView<T>) -> Result<()> {
        if self.direction != Direction::Download {
            return Err(Error::InvalidArgument(
                "an upload staging cannot download".into(),
            ));
        }
        let len = device.len();
        let staged = self.host_slice(gpu, len)?;
        // The transfer writes pinned memory after this call returns: the host reads it
        // only in finish_download, after the event recorded below.
        gpu.stream()
            .memcpy_dtoh(device, &mut staged[..len])
            .map_err(|e| Error::Driver(format!("download through pinned memory: {e}")))?;
        self.pending = len;
        self.record(gpu)
    }

    /// Waits for the download [`Self::start_download`] enqueued and returns its data.
    pub fn finish_download(&mut self) -> Result<Vec<T>> {
        self.wait()?;
        let len = std::mem::take(&mut self.pending);
        match &self.buffer {
            Some(buffer) if len > 0 => Ok(buffer.as_slice().map_err(pinned_error)?[..len].to_vec()),
            _ => Ok(Vec::new()),
        }
    }

    /// Records the staging's event after the transfers just enqueued.
    fn record(&mut self, gpu: &Gpu) -> Result<()> {
        let failed = |e| Error::Driver(format!("recording a pinned-memory copy: {e}"));
        let event = match &self.event {
            Some(event) => event,
            None => self
                .event
                .insert(gpu.context().new_event(None).map_err(failed)?),
        };
        event.record(gpu.stream()).map_err(failed)?;
        self.in_flight = true;
        Ok(())
    }
}

impl<T: DeviceElem + ValidAsZeroBits + Copy + Send + Sync> Drop for PinnedStaging<T> {
    fn drop(&mut self) {
        // The memory must outlive the transfers that use it (an error here has nowhere
        // to go: the buffer is freed after cudarc's own wait either way).
        let _ = self.wait();
    }
}

fn pinned_error(e: cudarc::driver::DriverError) -> Error {
    Error::Driver(format!("pinned host memory: {e}"))
}
