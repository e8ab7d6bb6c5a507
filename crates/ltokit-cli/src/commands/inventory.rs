//! `ltokit inventory`: every device-code entry of the given files.

use std::path::PathBuf;
use std::process::ExitCode;

use ltokit::formats::inventory::{self, FileInventory};

use indicatif::HumanBytes;

#[derive(serde::Serialize)]
struct Listing {
    files: Vec<FileInventory>,
}

/// Prints the inventories; a file that cannot be read or parsed is reported and makes
/// the exit status 1, but the other files are still listed.
pub fn run(json: bool, files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut listing = Listing { files: Vec::new() };
    let mut failed = false;
    for path in files {
        match inventory::inventory_file(path) {
            Ok(inv) => listing.files.push(inv),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&listing)?);
    } else {
        for inv in &listing.files {
            print_text(inv)?;
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The text form of one file's inventory.
pub fn print_text(inv: &FileInventory) -> std::io::Result<()> {
    outln!(
        "{} ({}, {} entries)",
        inv.path,
        inv.format,
        inv.entries.len()
    );
    if inv.entries.is_empty() {
        outln!("  no device code");
        return Ok(());
    }
    outln!(
        "  {:<6} {:<9} {:<5} {:>10} {:>10}  container",
        "kind",
        "arch",
        "codec",
        "stored",
        "raw"
    );
    for e in &inv.entries {
        outln!(
            "  {:<6} {:<9} {:<5} {:>10} {:>10}  {}",
            e.kind.name(),
            e.arch,
            e.codec.name(),
            e.stored_bytes,
            e.raw_bytes,
            e.container
        );
    }
    outln!("  totals:");
    for t in &inv.totals {
        outln!(
            "  {:<6} {:<9} {:>3} × {:>10} stored {:>10} raw",
            t.kind.name(),
            t.arch,
            t.count,
            HumanBytes(t.stored_bytes),
            HumanBytes(t.raw_bytes)
        );
    }
    Ok(())
}
