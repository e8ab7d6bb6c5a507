//! Recording a sequence of launches once and replaying it with one call (a CUDA graph made
//! by capturing a [`Gpu`]'s stream).
//!
//! A search is a fixed sequence of a dozen kernels; each launch costs the host a few
//! microseconds and the GPU a gap between kernels, and the host's work before the first
//! launch (choosing and checking the kernels) is time the GPU waits. A [`Recording`] of the
//! sequence replays every kernel with the arguments it was recorded with — the same device
//! addresses, read again at each replay, so new contents of the same buffers are searched —
//! in one launch.
//!
//! What a recording must not hold: an allocation. Memory allocated on a capturing stream
//! belongs to the graph (and a graph holding a live allocation cannot be launched again),
//! so code that may allocate asks [`Gpu::is_recording`] first and refuses, which aborts
//! the recording; the caller then runs the work unrecorded.

use cudarc::driver::{sys, CudaGraph};

use crate::error::{Error, Result};
use crate::launch::Gpu;

/// Launches recorded on a stream, replayed in order on that stream with one call.
pub struct Recording {
    graph: CudaGraph,
}

// SAFETY: a CUDA graph and its executable may be used from any thread as long as no two
// threads use them at once (the driver's rule for graph objects); a `Recording` is only
// replayed through `&mut self`, so moving it between threads (Send, not Sync) keeps that.
unsafe impl Send for Recording {}

impl Recording {
    /// Launches the recorded work again, on the stream it was recorded on (asynchronous,
    /// like the launches it replaces).
    pub fn replay(&mut self) -> Result<()> {
        self.graph
            .launch()
            .map_err(|e| Error::Driver(format!("replaying a recorded search: {e}")))
    }
}

impl Gpu {
    /// Runs `work` with the stream recording instead of executing: nothing it enqueues
    /// runs until the returned [`Recording`] is replayed. If `work` fails (an allocation
    /// refused while recording among the reasons), the recording is dropped and its error
    /// returned: nothing ran, and the work may be run again unrecorded.
    pub fn record<T>(&self, work: impl FnOnce() -> Result<T>) -> Result<(T, Recording)> {
        let stream = self.stream();
        // Thread-local mode: this thread's calls that cannot be recorded (synchronous
        // copies, waits) fail instead of running, and other threads are not affected.
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| Error::Driver(format!("starting to record the stream: {e}")))?;
        let outcome = work();
        // The capture is ended whatever the work did, so that the stream runs work again.
        let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
        let value = outcome?;
        match graph {
            Ok(Some(graph)) => Ok((value, Recording { graph })),
            Ok(None) => Err(Error::Driver(
                "recording the stream gave an empty graph (nothing was launched)".into(),
            )),
            Err(e) => Err(Error::Driver(format!("recording the stream: {e}"))),
        }
    }

    /// Whether this GPU's stream is being recorded ([`Gpu::record`]): work that would
    /// allocate device memory refuses while it is.
    pub fn is_recording(&self) -> Result<bool> {
        let status = self
            .stream()
            .capture_status()
            .map_err(|e| Error::Driver(format!("asking whether the stream records: {e}")))?;
        Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }
}
