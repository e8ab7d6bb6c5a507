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
    sys, CudaContext, CudaFunction, CudaModule, CudaStream, DeviceRepr, LaunchArgs, PushKernelArg,
    ValidAsZeroBits,
};

pub use cudarc::driver::{CudaSlice, LaunchConfig};

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

/// A kernel parameter as declared by the kernel's author.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// A device pointer (`T*`).
    Ptr,
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
            Param::Ptr | Param::I64 | Param::U64 | Param::F64 => 8,
        }
    }
}

/// Scalars that can be passed to a kernel by value.
pub trait Scalar: DeviceRepr {
    /// The parameter kind this type matches.
    const PARAM: Param;
}

macro_rules! scalar {
    ($($t:ty => $p:ident),*) => { $(impl Scalar for $t { const PARAM: Param = Param::$p; })* };
}
scalar!(i32 => I32, u32 => U32, f32 => F32, i64 => I64, u64 => U64, f64 => F64);

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

    /// Opens GPU `ordinal` (creates or retains its primary context).
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let count = Self::count()?;
        if ordinal >= count {
            return Err(Error::Driver(format!(
                "GPU {ordinal} does not exist ({count} found)"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| driver_error("context creation", e))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| driver_error("compute capability", e))?;
        let name = ctx.name().map_err(|e| driver_error("device name", e))?;
        let stream = ctx.default_stream();
        Ok(Gpu {
            ctx,
            stream,
            cc: ComputeCapability::new(major as u32, minor as u32),
            name,
        })
    }

    /// The device's compute capability.
    pub fn compute_capability(&self) -> ComputeCapability {
        self.cc
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

    /// Copies host data to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        self.stream
            .clone_htod(host)
            .map_err(|e| driver_error("upload", e))
    }

    /// A zeroed device buffer of `len` elements.
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.stream
            .alloc_zeros(len)
            .map_err(|e| driver_error("allocation", e))
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
        Ok(Module { module })
    }

    /// Loads a cubin and looks up kernel `name`, whose parameters must be `signature`.
    /// The declared signature is checked against the sizes the cubin records.
    pub fn load_kernel(&self, cubin: &[u8], name: &str, signature: &[Param]) -> Result<Kernel> {
        self.load_module(cubin)?.kernel(name, signature)
    }

    /// Starts a launch of `kernel`; add arguments in order, then [`Launch::run`].
    pub fn launch<'a>(&'a self, kernel: &'a Kernel, config: LaunchConfig) -> Launch<'a> {
        Launch {
            kernel,
            config,
            args: self.stream.launch_builder(&kernel.function),
            pushed: Vec::with_capacity(kernel.signature.len()),
        }
    }
}

/// A cubin loaded into a GPU context.
#[derive(Clone)]
pub struct Module {
    module: Arc<CudaModule>,
}

impl Module {
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
    pushed: Vec<Param>,
}

impl<'a> Launch<'a> {
    /// Passes a device buffer the kernel only reads.
    pub fn buffer<T>(mut self, buffer: &'a CudaSlice<T>) -> Self {
        self.args.arg(buffer);
        self.pushed.push(Param::Ptr);
        self
    }

    /// Passes a device buffer the kernel writes.
    pub fn buffer_mut<T>(mut self, buffer: &'a mut CudaSlice<T>) -> Self {
        self.args.arg(buffer);
        self.pushed.push(Param::Ptr);
        self
    }

    /// Passes a scalar by value.
    pub fn scalar<T: Scalar>(mut self, value: &'a T) -> Self {
        self.args.arg(value);
        self.pushed.push(T::PARAM);
        self
    }

    /// Checks the arguments against the kernel's parameters and the launch shape, then
    /// launches on the GPU's stream.
    ///
    /// Checked here, before anything reaches the GPU: the number, order and kinds of the
    /// arguments against the declared signature (itself checked against the parameter
    /// sizes the cubin records when the kernel was loaded), and the launch shape. A
    /// mismatch is an error and nothing runs.
    ///
    /// # Safety
    /// What the kernel does with its arguments cannot be checked from here. The caller
    /// must ensure that, for these scalar arguments and this launch shape, the kernel
    /// reads and writes each buffer only within its length and as its element type, and
    /// writes only buffers passed with [`Launch::buffer_mut`]. (Buffers stay borrowed
    /// until the launch is enqueued, and cudarc orders later operations on them after it.)
    pub unsafe fn run(mut self) -> Result<()> {
        if self.pushed != self.kernel.signature {
            return Err(Error::Launch {
                kernel: self.kernel.name.clone(),
                why: format!(
                    "arguments {:?} do not match its parameters {:?}",
                    self.pushed, self.kernel.signature
                ),
            });
        }
        let (g, b) = (self.config.grid_dim, self.config.block_dim);
        if [g.0, g.1, g.2, b.0, b.1, b.2].contains(&0)
            || u64::from(b.0) * u64::from(b.1) * u64::from(b.2) > 1024
        {
            return Err(Error::Launch {
                kernel: self.kernel.name.clone(),
                why: format!("invalid launch shape grid {g:?} block {b:?} (no zero dimension, at most 1024 threads a block)"),
            });
        }
        // SAFETY: the argument count and sizes match what the cubin records (checked above
        // and at load), so the driver reads a well-formed parameter buffer; the kernel's
        // memory accesses are the caller's contract (see # Safety).
        unsafe { self.args.launch(self.config) }
            .map(|_| ())
            .map_err(|e| driver_error(&format!("launch of {}", self.kernel.name), e))
    }
}
