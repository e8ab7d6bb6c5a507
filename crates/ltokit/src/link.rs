//! Linking any mix of LTO-IR, fatbins, cubins, PTX and host objects into a cubin for one
//! exact target with nvJitLink.
//!
//! Before nvJitLink is called, every input whose producer and target can be read is
//! checked: LTO-IR newer than the linker, IR for a target that cannot be linked for the
//! requested one, and fatbins with no usable entry are reported with what to do, rather
//! than as nvJitLink's bare error codes.

use std::borrow::Cow;
use std::path::Path;

use crate::arch::{CodeKind, Target, Variant};
use crate::error::{Error, Result};
use crate::formats::fatbin::{self, EntryKind};
use crate::formats::{cubin, ltoir};
use crate::fragment::Fragment;
use crate::toolkit::nvjitlink::{InputType, LinkData, NvJitLink};
use crate::version::Version;

/// What an input's bytes are, by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// LTO-IR (magic `ed 43 4e 7f`).
    LtoIr,
    /// Fatbin container (magic `0xBA55ED50`).
    Fatbin,
    /// Cubin (ELF, machine 190).
    Cubin,
    /// PTX text.
    Ptx,
    /// ELF host object with embedded device code.
    Object,
    /// `ar` archive of host objects.
    Archive,
}

impl InputFormat {
    /// A stable one-byte code for keys; codes never change meaning.
    pub fn key_code(self) -> u8 {
        match self {
            InputFormat::LtoIr => 1,
            InputFormat::Fatbin => 2,
            InputFormat::Cubin => 3,
            InputFormat::Ptx => 4,
            InputFormat::Object => 5,
            InputFormat::Archive => 6,
        }
    }

    fn nvjitlink_type(self) -> InputType {
        match self {
            InputFormat::LtoIr => InputType::LtoIr,
            InputFormat::Fatbin => InputType::Fatbin,
            InputFormat::Cubin => InputType::Cubin,
            InputFormat::Ptx => InputType::Ptx,
            InputFormat::Object => InputType::Object,
            InputFormat::Archive => InputType::Library,
        }
    }
}

/// True when `data` looks like PTX: text with a `.version` directive near the start.
pub fn looks_like_ptx(data: &[u8]) -> bool {
    let head = &data[..data.len().min(8192)];
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A multi-byte character cut at the window's end is still text.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return false,
    };
    text.lines()
        .any(|l| l.trim_start().starts_with(".version "))
        && text.lines().any(|l| l.trim_start().starts_with(".target "))
}

/// Identifies an input by its content.
pub fn sniff(data: &[u8]) -> Option<InputFormat> {
    if ltoir::is_ltoir(data) {
        Some(InputFormat::LtoIr)
    } else if fatbin::read::is_fatbin(data) {
        Some(InputFormat::Fatbin)
    } else if cubin::is_cubin(data) {
        Some(InputFormat::Cubin)
    } else if data.starts_with(b"\x7fELF") {
        Some(InputFormat::Object)
    } else if data.starts_with(b"!<arch>\n") {
        Some(InputFormat::Archive)
    } else if looks_like_ptx(data) {
        Some(InputFormat::Ptx)
    } else {
        None
    }
}

/// One input to a link.
#[derive(Debug, Clone)]
pub struct LinkInput<'a> {
    /// Name used in logs and errors.
    pub name: String,
    /// What the bytes are.
    pub format: InputFormat,
    /// The bytes.
    pub data: Cow<'a, [u8]>,
    /// The IR's target when known (fragments know theirs).
    pub target: Option<Target>,
    /// The producing toolkit when known.
    pub producer: Option<Version>,
}

impl<'a> LinkInput<'a> {
    /// An input whose format is sniffed from its content.
    pub fn from_bytes(name: impl Into<String>, data: impl Into<Cow<'a, [u8]>>) -> Result<Self> {
        let name = name.into();
        let data = data.into();
        let format = sniff(&data).ok_or_else(|| Error::UnrecognizedInput {
            input: name.clone(),
            what: "not LTO-IR, a fatbin, a cubin, PTX, an ELF object or an ar archive".into(),
        })?;
        let producer = match format {
            InputFormat::LtoIr => ltoir::producer_of_ir(&data),
            _ => None,
        };
        Ok(LinkInput {
            name,
            format,
            data,
            target: None,
            producer,
        })
    }

    /// Reads a file and sniffs its format.
    pub fn from_file(path: &Path) -> Result<LinkInput<'static>> {
        let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        LinkInput::from_bytes(path.display().to_string(), data)
    }

    /// A compiled fragment (its target and producer are known exactly).
    pub fn from_fragment(fragment: &'a Fragment) -> Self {
        LinkInput {
            name: fragment.name.clone(),
            format: InputFormat::LtoIr,
            data: Cow::Borrowed(&fragment.ltoir),
            target: Some(fragment.target),
            producer: Some(fragment.producer),
        }
    }
}

/// A successful link.
#[derive(Debug, Clone)]
pub struct LinkOutput {
    /// The cubin.
    pub cubin: Vec<u8>,
    /// The exact option list passed to nvJitLink.
    pub options: Vec<String>,
    /// nvJitLink's info log.
    pub info_log: String,
    /// The nvJitLink version that linked it.
    pub linker: Version,
}

/// Links `inputs` for `target` (an `sm_XY[a|f]`; `compute_`/`lto_` spellings are taken
/// as the same architecture). `-lto` is added when any input holds LTO-IR;
/// `extra_options` (e.g. `-O3`, `-split-compile=0`) follow `-arch`.
pub fn link(
    inputs: &[LinkInput<'_>],
    target: Target,
    extra_options: &[String],
) -> Result<LinkOutput> {
    if inputs.is_empty() {
        return Err(Error::InvalidArgument(
            "nothing to link: give at least one input".into(),
        ));
    }
    let linker = NvJitLink::get()?;
    let sass = target.with_kind(CodeKind::Sass);
    let mut needs_lto = false;
    for input in inputs {
        needs_lto |= check_input(input, &sass, linker.version())?;
    }
    let mut options = vec![format!("-arch={sass}")];
    if needs_lto && !extra_options.iter().any(|o| o == "-lto") {
        options.push("-lto".to_string());
    }
    options.extend(extra_options.iter().cloned());
    let data: Vec<LinkData<'_>> = inputs
        .iter()
        .map(|i| LinkData {
            kind: i.format.nvjitlink_type(),
            data: &i.data,
            name: &i.name,
        })
        .collect();
    let linked = linker.link(&options, &data).map_err(|e| match e {
        // A target this nvJitLink does not know: say which ones it does.
        Error::Link { code: 16 | 17, .. } => Error::InvalidTarget {
            text: target.to_string(),
            why: format!(
                "nvJitLink {} at {} does not link for it; it links for {} (and their a/f variants where they exist). fix: pick one of those, or install a newer nvJitLink {}.x",
                linker.version(),
                linker.path().display(),
                linker.supported_targets().join(", "),
                linker.version().major
            ),
        },
        other => other,
    })?;
    Ok(LinkOutput {
        cubin: linked.cubin,
        options,
        info_log: linked.info_log,
        linker: linker.version(),
    })
}

/// Checks one input against the target and linker; returns whether it carries LTO-IR.
fn check_input(input: &LinkInput<'_>, target: &Target, linker: Version) -> Result<bool> {
    match input.format {
        InputFormat::LtoIr => {
            let producer = input
                .producer
                .or_else(|| ltoir::producer_of_ir(&input.data));
            if let Some(producer) = producer {
                check_producer(&input.name, producer, linker)?;
            }
            if let Some(ir) = input.target {
                if !ir.ir_links_for(target) {
                    return Err(Error::InvalidTarget {
                        text: target.to_string(),
                        why: format!("{} holds LTO-IR for {ir}, which cannot be linked for {target} (base IR links for equal or newer architectures, f IR within its family, a IR only for the same aX target); recompile it for {}", input.name, target.nvrtc_arch()),
                    });
                }
            }
            Ok(true)
        }
        InputFormat::Fatbin => {
            let entries = fatbin::parse(&input.data).map_err(|e| Error::UnrecognizedInput {
                input: input.name.clone(),
                what: e.to_string(),
            })?;
            let usable: Vec<_> = entries
                .iter()
                .filter(|e| match e.kind {
                    // An `a` cubin is accepted only for the `a` target of its architecture.
                    EntryKind::Cubin => {
                        e.target.cubin_runs_on(target.cc)
                            && (e.target.variant != Variant::Specific
                                || target.variant == Variant::Specific)
                    }
                    EntryKind::Ptx | EntryKind::LtoIr => e.target.ir_links_for(target),
                })
                .collect();
            if usable.is_empty() {
                let listed: Vec<String> = entries
                    .iter()
                    .map(|e| format!("{} {}", e.kind, e.arch_name()))
                    .collect();
                return Err(Error::InvalidTarget {
                    text: target.to_string(),
                    why: format!("fatbin {} has no entry usable for {target} (it holds: {}); rebuild it with an entry for this architecture", input.name, if listed.is_empty() { "nothing".to_string() } else { listed.join(", ") }),
                });
            }
            for entry in usable.iter().filter(|e| e.kind == EntryKind::LtoIr) {
                if let Some(producer) = ltoir::producer_of(entry.payload_version) {
                    check_producer(&input.name, producer, linker)?;
                }
            }
            Ok(usable.iter().any(|e| e.kind == EntryKind::LtoIr))
        }
        InputFormat::Cubin => {
            let info =
                cubin::CubinInfo::parse(&input.data).map_err(|e| Error::UnrecognizedInput {
                    input: input.name.clone(),
                    what: e.to_string(),
                })?;
            if info.arch / 10 != target.cc.major {
                return Err(Error::InvalidTarget {
                    text: target.to_string(),
                    why: format!("{} is a cubin for sm_{}, which cannot be linked for {target} (cubins never cross major versions)", input.name, info.arch),
                });
            }
            Ok(false)
        }
        InputFormat::Ptx | InputFormat::Object | InputFormat::Archive => Ok(false),
    }
}

/// The producer/consumer rule: same major, linker at least as new.
pub fn check_producer(input: &str, producer: Version, linker: Version) -> Result<()> {
    if producer.major != linker.major || producer > linker {
        if producer.major != linker.major {
            return Err(Error::UnsupportedVersion {
                library: "nvJitLink",
                found: linker.to_string(),
                why: format!("{input} holds LTO-IR from CUDA {producer}; LTO-IR links only with an nvJitLink of the same major version ({}.x, at least {producer})", producer.major),
            });
        }
        return Err(Error::IrNewerThanLinker {
            input: input.to_string(),
            producer: producer.to_string(),
            linker: linker.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_by_content() {
        assert_eq!(
            sniff(&[0xed, 0x43, 0x4e, 0x7f, 1, 65]),
            Some(InputFormat::LtoIr)
        );
        assert_eq!(
            sniff(&0xBA55_ED50u32.to_le_bytes()),
            Some(InputFormat::Fatbin)
        );
        assert_eq!(
            sniff(b"//\n.version 9.0\n.target sm_90\n.address_size 64\n"),
            Some(InputFormat::Ptx)
        );
        assert_eq!(sniff(b"!<arch>\nfoo"), Some(InputFormat::Archive));
        assert_eq!(sniff(b"hello world"), None);
        assert_eq!(sniff(b""), None);
        let mut host = vec![0u8; 64];
        host[..4].copy_from_slice(b"\x7fELF");
        host[5] = 1;
        host[18] = 62; // EM_X86_64
        assert_eq!(sniff(&host), Some(InputFormat::Object));
        host[18] = 190;
        assert_eq!(sniff(&host), Some(InputFormat::Cubin));
    }

    #[test]
    fn producer_rule() {
        let v = Version::new;
        assert!(check_producer("x", v(13, 0), v(13, 0)).is_ok());
        assert!(check_producer("x", v(13, 0), v(13, 5)).is_ok());
        let newer = check_producer("x", v(13, 5), v(13, 0))
            .unwrap_err()
            .to_string();
        assert!(newer.contains("newer than nvJitLink 13.0"), "{newer}");
        let other_major = check_producer("x", v(12, 9), v(13, 0))
            .unwrap_err()
            .to_string();
        assert!(other_major.contains("same major"), "{other_major}");
    }
}
