//! nvFatbin: NVIDIA's fatbin writer. ltokit has its own writer ([`crate::formats::fatbin::write`]);
//! nvFatbin is used to cross-check it and is offered for callers that want NVIDIA's
//! exact output (e.g. its `-compress-mode=size`).

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use super::{
    c_string, c_strings, library_accessors, open_library, reported_version, resolve, Lazy,
    LibrarySpec, OpenedLibrary, Version,
};
use crate::error::{Error, Result};
use crate::formats::fatbin::EntryKind;

const SPEC: LibrarySpec = LibrarySpec {
    name: "nvFatbin",
    soname: "libnvfatbin.so.13",
    wheel: "nvidia-nvfatbin==13.0.85",
};

type Handle = *mut c_void;
type Res = c_int;

struct Fns {
    error_string: unsafe extern "C" fn(Res) -> *const c_char,
    create: unsafe extern "C" fn(*mut Handle, *const *const c_char, usize) -> Res,
    destroy: unsafe extern "C" fn(*mut Handle) -> Res,
    add_ptx: unsafe extern "C" fn(
        Handle,
        *const c_char,
        usize,
        *const c_char,
        *const c_char,
        *const c_char,
    ) -> Res,
    add_cubin:
        unsafe extern "C" fn(Handle, *const c_void, usize, *const c_char, *const c_char) -> Res,
    add_ltoir: unsafe extern "C" fn(
        Handle,
        *const c_void,
        usize,
        *const c_char,
        *const c_char,
        *const c_char,
    ) -> Res,
    size: unsafe extern "C" fn(Handle, *mut usize) -> Res,
    get: unsafe extern "C" fn(Handle, *mut c_void) -> Res,
}

/// A loaded nvFatbin library.
pub struct NvFatbin {
    fns: Fns,
    version: Version,
    opened: OpenedLibrary,
}

/// One entry to put into a fatbin with nvFatbin.
#[derive(Debug, Clone, Copy)]
pub struct FatbinInput<'a> {
    /// PTX, cubin or LTO-IR.
    pub kind: EntryKind,
    /// The payload.
    pub data: &'a [u8],
    /// nvFatbin's arch spelling: `"90"`, `"90a"`, `"100f"`.
    pub arch: &'a str,
    /// An identifier stored with the entry.
    pub identifier: &'a str,
}

static LOADED: Lazy<NvFatbin> = Lazy::new();

impl NvFatbin {
    /// The process-wide nvFatbin, loaded on first use.
    pub fn get() -> Result<Arc<NvFatbin>> {
        LOADED.get_or_load(Self::load)
    }

    fn load() -> Result<Self> {
        let opened = open_library(&SPEC)?;
        macro_rules! sym {
            ($api:literal) => {
                // SAFETY: the field's type is the C signature of this API (nvFatbin.h, 13.0).
                unsafe { resolve(&opened, SPEC.name, $api, &[$api.to_string()])? }
            };
        }
        // SAFETY: nvFatbinResult nvFatbinVersion(unsigned int* major, unsigned int* minor)
        // (nvFatbin.h, 13.0).
        let version = unsafe {
            reported_version::<u32>(
                &SPEC,
                &opened,
                "nvFatbinVersion",
                "fatbins are written for that major version",
            )?
        };
        let fns = Fns {
            error_string: sym!("nvFatbinGetErrorString"),
            create: sym!("nvFatbinCreate"),
            destroy: sym!("nvFatbinDestroy"),
            add_ptx: sym!("nvFatbinAddPTX"),
            add_cubin: sym!("nvFatbinAddCubin"),
            add_ltoir: sym!("nvFatbinAddLTOIR"),
            size: sym!("nvFatbinSize"),
            get: sym!("nvFatbinGet"),
        };
        Ok(NvFatbin {
            fns,
            version,
            opened,
        })
    }

    library_accessors!();

    fn check(&self, call: &'static str, rc: Res) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: nvFatbinGetErrorString accepts any code and returns a static string (or
        // null, which c_string handles).
        let message = unsafe { c_string((self.fns.error_string)(rc)) };
        Err(Error::Nvfatbin {
            call,
            code: rc,
            message,
        })
    }

    /// Builds a fatbin from `inputs` with nvFatbin `options` (e.g. `-64`,
    /// `-compress-mode=size`). The handle is destroyed on every path.
    pub fn build(&self, options: &[String], inputs: &[FatbinInput<'_>]) -> Result<Vec<u8>> {
        let c_opts = c_strings(options)?;
        let ptrs: Vec<*const c_char> = c_opts.iter().map(|s| s.as_ptr()).collect();
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; `ptrs` holds that many NUL-terminated strings.
        self.check("nvFatbinCreate", unsafe {
            (self.fns.create)(&mut raw, ptrs.as_ptr(), ptrs.len())
        })?;
        let handle = Guard { lib: self, raw };
        let empty = CString::default();
        for input in inputs {
            let arch = CString::new(input.arch)
                .map_err(|_| Error::InvalidArgument("arch contains NUL".into()))?;
            let ident = CString::new(input.identifier)
                .map_err(|_| Error::InvalidArgument("identifier contains NUL".into()))?;
            let (call, rc) = match input.kind {
                EntryKind::Ptx => {
                    // nvFatbinAddPTX wants the text NUL-terminated.
                    let mut text = input.data.to_vec();
                    if text.last() != Some(&0) {
                        text.push(0);
                    }
                    // SAFETY: `text` is a live, NUL-terminated buffer of this length; the
                    // strings are NUL-terminated and outlive the call; the handle is live.
                    ("nvFatbinAddPTX", unsafe {
                        (self.fns.add_ptx)(
                            handle.raw,
                            text.as_ptr().cast(),
                            text.len(),
                            arch.as_ptr(),
                            ident.as_ptr(),
                            empty.as_ptr(),
                        )
                    })
                }
                // SAFETY: pointer and length describe the live input slice; the strings
                // are NUL-terminated and outlive the call; the handle is live.
                EntryKind::Cubin => ("nvFatbinAddCubin", unsafe {
                    (self.fns.add_cubin)(
                        handle.raw,
                        input.data.as_ptr().cast(),
                        input.data.len(),
                        arch.as_ptr(),
                        ident.as_ptr(),
                    )
                }),
                // SAFETY: as for the cubin arm.
                EntryKind::LtoIr => ("nvFatbinAddLTOIR", unsafe {
                    (self.fns.add_ltoir)(
                        handle.raw,
                        input.data.as_ptr().cast(),
                        input.data.len(),
                        arch.as_ptr(),
                        ident.as_ptr(),
                        empty.as_ptr(),
                    )
                }),
            };
            self.check(call, rc)?;
        }
        let mut size = 0usize;
        // SAFETY: the handle is live and `size` a valid out-pointer.
        self.check("nvFatbinSize", unsafe {
            (self.fns.size)(handle.raw, &mut size)
        })?;
        let mut out = vec![0u8; size];
        // SAFETY: `out` has exactly the size nvFatbin reported.
        self.check("nvFatbinGet", unsafe {
            (self.fns.get)(handle.raw, out.as_mut_ptr().cast())
        })?;
        Ok(out)
    }
}

struct Guard<'a> {
    lib: &'a NvFatbin,
    raw: Handle,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvFatbinCreate and is destroyed only here.
        let rc = unsafe { (self.lib.fns.destroy)(&mut self.raw) };
        if rc != 0 {
            tracing::warn!(code = rc, "nvFatbinDestroy failed");
        }
    }
}
