//! Loading cubins on a GPU and launching their kernels, through cudarc's driver API.
//!
//! Launches are checked before they reach the GPU: a kernel is loaded with the parameter
//! list its author declares ([`Param`]), which is compared with the parameter sizes the
//! cubin itself records (`cuFuncGetParamInfo`); each launch's arguments are then checked
//! against that list, so a launch with the wrong arguments is an error, not a crash.
//! Whether the kernel stays inside the buffers it is given depends on the kernel and its
//! scalar arguments, which ltokit cannot see: [`Launch::run`] is `unsafe` for that
//! reason, with the contract spelt out.
//!
//! libcuda is opened only here, and only after [`driver_available`] said it exists, so
//! the rest of ltokit works on machines without a GPU.

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, DevicePtr, DeviceRepr, DeviceSlice, LaunchArgs,
    PushKernelArg, ValidAsZeroBits,
};

pub use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig};

use crate::arch::ComputeCapability;
use crate::error::{Error, Result};

/// True when libcuda can be loaded (a driver is installed); never panics.
pub fn driver_available() -> bool {
    // SAFETY: is_culib_present only tries to dlopen libcuda and reports whether it could.
    unsafe { sys::is_culib_present() }
}

fn driver_error(what: &str, e: cudarc::driver::DriverError) -> Error {
    Error::Driver(format!("{what}: {e}"))
}

/// The device address and length of a buffer or view: what tells two buffers apart (a
/// recorded search's key, [`crate::graph`]). On a [`Gpu::open`] context (no per-buffer
/// events) reading the address enqueues nothing; on a context of the caller's that tracks
/// events, cudarc orders the read like a launch's (an event wait and record).
pub fn device_extent<T, B: DevicePtr<T>>(buffer: &B, stream: &CudaStream) -> (u64, usize) {
    let (address, _sync) = buffer.device_ptr(stream);
    (address, buffer.len())
}

/// Element types a device buffer may hold, as a kernel's signature names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// `int8_t`.
    I8,
    /// `uint8_t`.
    U8,
    /// `int16_t`.
    I16,
    /// `uint16_t` (also the storage of `__half` / `__nv_bfloat16` on the host).
    U16,
    /// `int32_t`.
    I32,
    /// `uint32_t`.
    U32,
    /// `int64_t`.
    I64,
    /// `uint64_t`.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

/// Host types whose device buffers ltokit can check against a signature.
pub trait DeviceElem: DeviceRepr {
    /// The element type this host type stands for.
    const ELEM: Elem;
}

macro_rules! device_elem {
    ($($t:ty => $e:ident),*) => { $(impl DeviceElem for $t { const ELEM: Elem = Elem::$e; })* };
}
device_elem!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

/// How many elements a buffer parameter must hold at least.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// Not checked (the count is a product of several arguments, say): the launch's
    /// safety contract covers it.
    Any,
    /// At least this many elements.
    AtLeast(usize),
    /// At least the value of the integer scalar argument at this position (e.g. `n`).
    AtLeastArg(usize),
}

/// A kernel parameter as declared by the kernel's author.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// A device pointer of any element type the kernel only reads (`const T*`),
    /// unchecked but for being a buffer.
    Ptr,
    /// A device buffer the kernel reads: its element type and the elements it needs.
    Buffer(Elem, Extent),
    /// A device buffer the kernel writes: its element type and the elements it needs.
    BufferMut(Elem, Extent),
    /// `int` / `int32_t`.
    I32,
    /// `unsigned` / `uint32_t`.
    U32,
    /// `float`.
    F32,
    /// `long long` / `int64_t`.
    I64,
    /// `unsigned long long` / `uint64_t` / `size_t`.
    U64,
    /// `double`.
    F64,
}

impl Param {
    /// Size in bytes in the kernel's parameter buffer.
    pub fn size(self) -> usize {
        match self {
            Param::I32 | Param::U32 | Param::F32 => 4,
            Param::Ptr
            | Param::Buffer(..)
            | Param::BufferMut(..)
            | Param::I64
            | Param::U64
            | Param::F64 => 8,
        }
    }
}

/// Scalars that can be passed to a kernel by value.
pub trait Scalar: DeviceRepr + Copy {
    /// The parameter kind this type matches.
    const PARAM: Param;
    /// The value as an element count, for [`Extent::AtLeastArg`] (integers only).
    fn as_count(self) -> Option<i128>;
}

macro_rules! scalar {
    ($($t:ty => $p:ident, $int:expr),*) => { $(impl Scalar for $t {
        const PARAM: Param = Param::$p;
        #[allow(clippy::redundant_closure_call)]
        fn as_count(self) -> Option<i128> { ($int)(self) }
    })* };
}
scalar!(
    i32 => I32, |v: i32| Some(i128::from(v)),
    u32 => U32, |v: u32| Some(i128::from(v)),
    i64 => I64, |v: i64| Some(i128::from(v)),
    u64 => U64, |v: u64| Some(i128::from(v)),
    f32 => F32, |_| None,
    f64 => F64, |_| None
);

/// What one launch argument turned out to be, for the check against the signature.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pushed {
    Buffer {
        elem: Option<Elem>,
        len: usize,
        writable: bool,
        context: sys::CUcontext,
    },
    Scalar(Param, Option<i128>),
}

/// One GPU: its context, a stream, and what it is.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    cc: ComputeCapability,
    name: String,
}

impl Gpu {
    /// Number of GPUs, or an error saying there is no driver.
    pub fn count() -> Result<usize> {
        if !driver_available() {
            return Err(Error::Driver(
                "libcuda is not installed (no NVIDIA driver): no GPU can be used".into(),
            ));
        }
        CudaContext::device_count()
            .map(|n| n as usize)
            .map_err(|e| driver_error("cuDeviceGetCount", e))
    }

    /// An error unless GPU `ordinal` exists (a driver is installed and it has that many).
    fn check_ordinal(ordinal: usize) -> Result<()> {
        let count = Self::count()?;
        if ordinal >= count {
            return Err(Error::Driver(format!(
                "GPU {ordinal} does not exist ({count} found)"
            )));
        }
        Ok(())
    }

    /// Opens GPU `ordinal` (creates or retains its primary context) with a stream of its
    /// own, which [`Gpu::stream`] names: work of other code on the context's default
    /// stream is not ordered with it.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        Self::check_ordinal(ordinal)?;
        let ctx = CudaContext::new(ordinal).map_err(|e| driver_error("context creation", e))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| driver_error("compute capability", e))?;
        let name = ctx.name().map_err(|e| driver_error("device name", e))?;
        // SAFETY: cudarc's per-buffer events order a buffer's uses across streams; all of
        // a Gpu's work goes to its one stream, in order, so they would only add an event
        // record and wait to every launch. Switched off before any buffer of this context
        // object exists, as cudarc requires.
        unsafe { ctx.disable_event_tracking() };
        // A stream of its own rather than the legacy default stream, which cannot be
        // recorded (`graph`): non-blocking, so it does not wait for other users' work on
        // the default stream either.
        let stream = ctx
            .new_stream()
            .map_err(|e| driver_error("stream creation", e))?;
        Ok(Gpu {
            ctx,
            stream,
            cc: ComputeCapability::new(major as u32, minor as u32),
            name,
        })
    }

    /// The compute capability of GPU `ordinal`, read without creating its context (the
    /// driver initialised, two device attributes): what linking kernels for the GPU
    /// needs, so that a process can link them while its context is being created.
    pub fn probe_compute_capability(ordinal: usize) -> Result<ComputeCapability> {
        Self::check_ordinal(ordinal)?;
        cudarc::driver::result::init().map_err(|e| driver_error("cuInit", e))?;
        let device = cudarc::driver::result::device::get(ordinal as i32)
            .map_err(|e| driver_error("cuDeviceGet", e))?;
        let attribute = |attribute, what| {
            // SAFETY: `device` was returned by cuDeviceGet above, after cuInit.
            unsafe { cudarc::driver::result::device::get_attribute(device, attribute) }
                .map_err(|e| driver_error(what, e))
        };
        use cudarc::driver::sys::CUdevice_attribute as A;
        let major = attribute(
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "compute capability",
        )?;
        let minor = attribute(
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "compute capability",
        )?;
        Ok(ComputeCapability::new(major as u32, minor as u32))
    }

    /// Wraps a context and stream the caller already has (its own cudarc objects):
    /// ltokit loads modules into that context and launches on that stream.
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Gpu> {
        let ctx = Arc::clone(stream.context());
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| driver_error("compute capability", e))?;
        let name = ctx.name().map_err(|e| driver_error("device name", e))?;
        Ok(Gpu {
            ctx,
            stream,
            cc: ComputeCapability::new(major as u32, minor as u32),
            name,
        })
    }

    /// Wraps a context the caller already has; launches go to its default stream (which
    /// cannot be recorded: [`Gpu::record`] fails there, and searches run unrecorded).
    pub fn from_context(ctx: Arc<CudaContext>) -> Result<Gpu> {
        Gpu::from_stream(ctx.default_stream())
    }

    /// The device's compute capability.
    pub fn compute_capability(&self) -> ComputeCapability {
        self.cc
    }

    /// The most dynamic shared memory one block may use on this device, in bytes (the
    /// opt-in limit, e.g. 227 KiB on Hopper).
    pub fn max_shared_per_block(&self) -> Result<usize> {
        self.size_attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            "shared memory limit",
        )
    }

    /// The shared memory one SM holds for all its resident blocks, in bytes (228 KiB on
    /// Hopper; each block also takes 1 KiB of it for the system).
    pub fn max_shared_per_sm(&self) -> Result<usize> {
        self.size_attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            "shared memory per SM",
        )
    }

    /// The device's streaming multiprocessors (132 on an H100 SXM or H200).
    pub fn multiprocessor_count(&self) -> Result<usize> {
        self.size_attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "multiprocessor count",
        )
    }

    /// A device attribute that counts something (a size), `what` naming it in errors.
    fn size_attribute(
        &self,
        attribute: cudarc::driver::sys::CUdevice_attribute,
        what: &str,
    ) -> Result<usize> {
        self.ctx
            .attribute(attribute)
            .map(|v| v.max(0) as usize)
            .map_err(|e| driver_error(what, e))
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cudarc context, for callers that need more of the driver API.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream launches and copies go to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Copies host data to a new device buffer (an error, out of memory among them, names
    /// the bytes).
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        self.refuse_while_recording("uploading", host.len(), size_of::<T>())?;
        self.stream
            .clone_htod(host)
            .map_err(|e| driver_error(&sized("uploading", host.len(), size_of::<T>()), e))
    }

    /// A zeroed device buffer of `len` elements.
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.refuse_while_recording("allocating", len, size_of::<T>())?;
        self.stream
            .alloc_zeros(len)
            .map_err(|e| driver_error(&sized("allocating", len, size_of::<T>()), e))
    }

    /// A device buffer of `len` elements whose contents are not initialised: for buffers a
    /// kernel writes in full before anything reads them (no zero-fill pass).
    pub fn alloc<T: DeviceElem>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.refuse_while_recording("allocating", len, size_of::<T>())?;
        // SAFETY: every bit pattern is a valid value of a DeviceElem type (plain integers
        // and floats), so reading the buffer before it is written is never undefined
        // behaviour, only unspecified values.
        unsafe { self.stream.alloc::<T>(len) }
            .map_err(|e| driver_error(&sized("allocating", len, size_of::<T>()), e))
    }

    /// An error if the stream is being recorded ([`Gpu::record`]): memory allocated (or
    /// freed) then would belong to the recording, which could not be replayed while it
    /// lives. `what` `len` elements of `elem` bytes name the allocation in the error.
    pub fn refuse_while_recording(&self, what: &str, len: usize, elem: usize) -> Result<()> {
        if self.is_recording()? {
            return Err(Error::Driver(format!(
                "{} while the stream is recorded: allocate before recording",
                sized(what, len, elem)
            )));
        }
        Ok(())
    }

    /// Sets every element of a device buffer to zero (enqueued on the stream).
    pub fn clear<T: DeviceElem + ValidAsZeroBits>(&self, device: &mut CudaSlice<T>) -> Result<()> {
        self.stream
            .memset_zeros(device)
            .map_err(|e| driver_error("memset", e))
    }

    /// Copies host data into an existing device buffer (its first `host.len()` elements).
    pub fn upload_into<T: DeviceRepr>(&self, host: &[T], device: &mut CudaSlice<T>) -> Result<()> {
        if host.len() > device.len() {
            return Err(Error::InvalidArgument(format!(
                "{} elements do not fit a device buffer of {}",
                host.len(),
                device.len()
            )));
        }
        let mut dst = device.slice_mut(0..host.len());
        self.stream
            .memcpy_htod(host, &mut dst)
            .map_err(|e| driver_error("upload", e))
    }

    /// Copies the first `len` elements of a device buffer back to the host (waits for the
    /// stream).
    pub fn download_prefix<T: DeviceRepr + Default + Clone>(
        &self,
        device: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>> {
        let mut host = vec![T::default(); len.min(device.len())];
        self.stream
            .memcpy_dtoh(&device.slice(0..host.len()), &mut host)
            .map_err(|e| driver_error("download", e))?;
        Ok(host)
    }

    /// Copies a device buffer back to the host (waits for the stream).
    pub fn download<T: DeviceRepr>(&self, device: &CudaSlice<T>) -> Result<Vec<T>> {
        self.stream
            .clone_dtoh(device)
            .map_err(|e| driver_error("download", e))
    }

    /// Waits for all work on the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| driver_error("synchronize", e))
    }

    /// Loads a cubin (or a fatbin holding one for this GPU) into the context.
    pub fn load_module(&self, image: &[u8]) -> Result<Module> {
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(image.to_vec()))
            .map_err(|e| {
                driver_error(
                    "cuModuleLoadData (is the cubin built for this GPU's architecture?)",
                    e,
                )
            })?;
        Ok(Module {
            module,
            context: Arc::clone(&self.ctx),
        })
    }

    /// Loads a cubin and looks up kernel `name`, whose parameters must be `signature`.
    /// The declared signature is checked against the sizes the cubin records.
    pub fn load_kernel(&self, cubin: &[u8], name: &str, signature: &[Param]) -> Result<Kernel> {
        self.load_module(cubin)?.kernel(name, signature)
    }

    /// Starts a launch of `kernel` on this GPU's stream; add arguments in order, then
    /// [`Launch::run`].
    pub fn launch<'a>(&'a self, kernel: &'a Kernel, config: LaunchConfig) -> Launch<'a> {
        Launch::on(&self.stream, kernel, config)
    }
}

/// A cubin loaded into a GPU context.
#[derive(Clone)]
pub struct Module {
    module: Arc<CudaModule>,
    context: Arc<CudaContext>,
}

impl Module {
    /// The cudarc module, for callers that use the driver API directly.
    pub fn cuda_module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// Looks up kernel `name`, whose parameters must be `signature`; the declared
    /// signature is checked against the parameter sizes the cubin records.
    pub fn kernel(&self, name: &str, signature: &[Param]) -> Result<Kernel> {
        if name.contains('\0') {
            return Err(Error::InvalidArgument(format!(
                "kernel name {name:?} contains a NUL byte"
            )));
        }
        let function = self
            .module
            .load_function(name)
            .map_err(|e| driver_error(&format!("kernel {name} not found in the cubin"), e))?;
        let recorded = param_sizes(&function);
        let declared: Vec<usize> = signature.iter().map(|p| p.size()).collect();
        if recorded != declared {
            return Err(Error::Launch {
                kernel: name.to_string(),
                why: format!(
                    "declared parameter sizes {declared:?} do not match the cubin's {recorded:?}"
                ),
            });
        }
        Ok(Kernel {
            name: name.to_string(),
            function,
            signature: signature.to_vec(),
            context: Arc::clone(&self.context),
        })
    }
}

/// Loads cubins from the kernel cache into one GPU's context: L1 then holds modules.
pub struct ModuleLoader {
    gpu: Arc<Gpu>,
}

impl ModuleLoader {
    /// A loader for `gpu`.
    pub fn new(gpu: Arc<Gpu>) -> Self {
        ModuleLoader { gpu }
    }
}

impl crate::cache::Loader for ModuleLoader {
    type Item = Module;
    fn load(&self, _plan: &crate::plan::Plan, cubin: Arc<[u8]>) -> Result<Module> {
        self.gpu.load_module(&cubin)
    }
}

/// Parameter sizes recorded in the cubin for a kernel.
fn param_sizes(function: &CudaFunction) -> Vec<usize> {
    let mut sizes = Vec::new();
    for index in 0.. {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: the function handle is live (held by `function`); both out-pointers are
        // valid; an index past the last parameter returns an error and writes nothing.
        let rc = unsafe {
            sys::cuFuncGetParamInfo(function.cu_function(), index, &mut offset, &mut size)
        };
        if rc != sys::CUresult::CUDA_SUCCESS {
            break;
        }
        sizes.push(size);
    }
    sizes
}

/// A kernel loaded from a cubin, with its declared parameter list.
pub struct Kernel {
    name: String,
    function: CudaFunction,
    signature: Vec<Param>,
    context: Arc<CudaContext>,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its declared parameters.
    pub fn signature(&self) -> &[Param] {
        &self.signature
    }

    /// The cudarc function, for callers that launch it themselves.
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// Allows launches with up to `bytes` of dynamic shared memory (past the 48 KiB
    /// default, up to what the device allows).
    pub fn set_max_dynamic_shared_bytes(&self, bytes: u32) -> Result<()> {
        let value = i32::try_from(bytes)
            .map_err(|_| Error::InvalidArgument(format!("{bytes} bytes of shared memory")))?;
        self.function
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                value,
            )
            .map_err(|e| {
                driver_error(
                    &format!("{}: {bytes} bytes of dynamic shared memory", self.name),
                    e,
                )
            })
    }
}

/// A launch being assembled; arguments are checked against the kernel's parameters.
pub struct Launch<'a> {
    kernel: &'a Kernel,
    config: LaunchConfig,
    args: LaunchArgs<'a>,
    pushed: Vec<Pushed>,
    stream_context: cudarc::driver::sys::CUcontext,
}

impl<'a> Launch<'a> {
    /// Starts a launch of `kernel` on `stream` (any stream of the context the kernel was
    /// loaded into, e.g. one the caller made); add arguments in order, then
    /// [`Launch::run`].
    pub fn on(stream: &'a Arc<CudaStream>, kernel: &'a Kernel, config: LaunchConfig) -> Self {
        Launch {
            kernel,
            config,
            args: stream.launch_builder(&kernel.function),
            pushed: Vec::with_capacity(kernel.signature.len()),
            stream_context: stream.context().cu_ctx(),
        }
    }

    fn buffer_arg(
        mut self,
        elem: Option<Elem>,
        len: usize,
        writable: bool,
        stream: &Arc<CudaStream>,
    ) -> Self {
        self.pushed.push(Pushed::Buffer {
            elem,
            len,
            writable,
            context: stream.context().cu_ctx(),
        });
        self
    }

    /// Passes a device buffer the kernel only reads.
    pub fn buffer<T: DeviceElem>(mut self, buffer: &'a CudaSlice<T>) -> Self {
        self.args.arg(buffer);
        self.buffer_arg(Some(T::ELEM), buffer.len(), false, buffer.stream())
    }

    /// Passes a view of a device buffer the kernel only reads.
    pub fn view<'v: 'a, T: DeviceElem>(mut self, view: &'a CudaView<'v, T>) -> Self {
        self.args.arg(view);
        self.buffer_arg(Some(T::ELEM), view.len(), false, DeviceSlice::stream(view))
    }

    /// Passes a device buffer the kernel writes.
    pub fn buffer_mut<T: DeviceElem>(mut self, buffer: &'a mut CudaSlice<T>) -> Self {
        let (len, stream) = (buffer.len(), Arc::clone(buffer.stream()));
        self.args.arg(buffer);
        self.buffer_arg(Some(T::ELEM), len, true, &stream)
    }

    /// Passes a mutable view of a device buffer the kernel writes.
    pub fn view_mut<'v: 'a, T: DeviceElem>(mut self, view: &'a mut CudaViewMut<'v, T>) -> Self {
        let (len, stream) = (view.len(), Arc::clone(DeviceSlice::stream(view)));
        self.args.arg(view);
        self.buffer_arg(Some(T::ELEM), len, true, &stream)
    }

    /// Passes a scalar by value.
    pub fn scalar<T: Scalar>(mut self, value: &'a T) -> Self {
        self.args.arg(value);
        self.pushed.push(Pushed::Scalar(T::PARAM, value.as_count()));
        self
    }

    /// Why the arguments do not fit the declared signature, if they do not.
    fn mismatch(&self) -> Option<String> {
        let signature = &self.kernel.signature;
        if self.pushed.len() != signature.len() {
            return Some(format!(
                "{} arguments for {} parameters {signature:?}",
                self.pushed.len(),
                signature.len()
            ));
        }
        let kernel_context = self.kernel.context.cu_ctx();
        for (i, (declared, pushed)) in signature.iter().zip(&self.pushed).enumerate() {
            if let Pushed::Buffer { context, .. } = pushed {
                if *context != kernel_context {
                    return Some(format!(
                        "argument {i}: a buffer of another context (another GPU?) than the kernel's"
                    ));
                }
            }
            let problem = match (*declared, *pushed) {
                (Param::Ptr, Pushed::Buffer { .. }) => None,
                (Param::Buffer(elem, extent), Pushed::Buffer { elem: got, len, .. })
                | (
                    Param::BufferMut(elem, extent),
                    Pushed::Buffer {
                        elem: got,
                        len,
                        writable: true,
                        ..
                    },
                ) => {
                    if got != Some(elem) {
                        Some(format!("a buffer of {got:?}, declared {elem:?}"))
                    } else {
                        self.short(extent, len)
                    }
                }
                (Param::BufferMut(..), Pushed::Buffer { .. }) => Some(
                    "a read-only buffer where the kernel writes (pass it with buffer_mut)".into(),
                ),
                (declared, Pushed::Scalar(kind, _)) if declared == kind => None,
                (declared, pushed) => Some(format!("{pushed:?} where {declared:?} is declared")),
            };
            if let Some(problem) = problem {
                return Some(format!("argument {i}: {problem}"));
            }
        }
        None
    }

    /// Why a buffer of `len` elements is too short for `extent`, if it is.
    fn short(&self, extent: Extent, len: usize) -> Option<String> {
        let need = match extent {
            Extent::Any => return None,
            Extent::AtLeast(n) => n as i128,
            Extent::AtLeastArg(j) => match self.pushed.get(j) {
                Some(Pushed::Scalar(_, Some(n))) => *n,
                _ => {
                    return Some(format!(
                        "its length is declared by argument {j}, which is not an integer"
                    ))
                }
            },
        };
        ((len as i128) < need).then(|| format!("{len} elements, the kernel needs {need}"))
    }

    /// Checks the arguments against the kernel's parameters and the launch shape, then
    /// launches on the stream.
    ///
    /// Checked here, before anything reaches the GPU: the number, order and kinds of the
    /// arguments against the declared signature (itself checked against the parameter
    /// sizes the cubin records when the kernel was loaded), each typed buffer's element
    /// type and length against what is declared, that written buffers were passed as
    /// such, that the stream and every buffer belong to the kernel's context, and the
    /// launch shape. A
    /// mismatch is an error and nothing runs.
    ///
    /// # Safety
    /// What the kernel does with its arguments cannot be checked from here. The caller
    /// must ensure that, for these arguments and this launch shape, the kernel reads and
    /// writes each buffer only within its length and as its element type (which the
    /// checks above establish only as far as the signature declares [`Extent`]s), and
    /// writes only buffers passed with [`Launch::buffer_mut`] or [`Launch::view_mut`].
    /// (Buffers stay borrowed until the launch is enqueued, and cudarc orders later
    /// operations on them after it.)
    pub unsafe fn run(mut self) -> Result<()> {
        let refuse = |why: String| Error::Launch {
            kernel: self.kernel.name.clone(),
            why,
        };
        if let Some(why) = self.mismatch() {
            return Err(refuse(format!(
                "the arguments do not match its parameters: {why}"
            )));
        }
        if self.stream_context != self.kernel.context.cu_ctx() {
            return Err(refuse(
                "the stream belongs to another context than the one the kernel was loaded into"
                    .into(),
            ));
        }
        let (g, b) = (self.config.grid_dim, self.config.block_dim);
        if [g.0, g.1, g.2, b.0, b.1, b.2].contains(&0)
            || u64::from(b.0) * u64::from(b.1) * u64::from(b.2) > 1024
        {
            return Err(refuse(format!("invalid launch shape grid {g:?} block {b:?} (no zero dimension, at most 1024 threads a block)")));
        }
        // SAFETY: the argument count and sizes match what the cubin records (checked above
        // and at load), so the driver reads a well-formed parameter buffer; the kernel's
        // memory accesses are the caller's contract (see # Safety).
        unsafe { self.args.launch(self.config) }
            .map(|_| ())
            .map_err(|e| {
                let shape = format!(
                    "launch of {} (grid {g:?}, block {b:?}, {} bytes of dynamic shared memory)",
                    self.kernel.name, self.config.shared_mem_bytes
                );
                driver_error(&shape, e)
            })
    }
}

/// What a device transfer or allocation of `len` elements of `size` bytes was doing, for
/// its error (an out-of-memory error then names what did not fit).
fn sized(what: &str, len: usize, size: usize) -> String {
    format!("{what} {len} elements ({} bytes)", len.saturating_mul(size))
}
