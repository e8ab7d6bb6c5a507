//! The providers level: prebuilt cubins for the target, read-only.

use std::sync::Arc;

use super::level::{CacheLevel, Recorder, Request};
use super::stats::Stats;
use super::Level;
use crate::provider::{self, Provider};

/// The providers found on the provider path; each request asks those that serve its
/// target's compute capability, best first.
pub struct ProvidersLevel {
    providers: Vec<Arc<Provider>>,
    allow_newer_minor: bool,
    recorder: Arc<Recorder>,
}

impl ProvidersLevel {
    /// A level of `providers`.
    pub fn new(
        providers: Vec<Arc<Provider>>,
        allow_newer_minor: bool,
        recorder: Arc<Recorder>,
    ) -> Self {
        ProvidersLevel {
            providers,
            allow_newer_minor,
            recorder,
        }
    }

    /// Every provider found (for every target).
    pub fn all(&self) -> &[Arc<Provider>] {
        &self.providers
    }

    fn serving(&self, request: &Request) -> Vec<Arc<Provider>> {
        provider::for_device(
            &self.providers,
            request.plan.target().cc,
            self.allow_newer_minor,
        )
    }
}

impl CacheLevel for ProvidersLevel {
    fn name(&self) -> &'static str {
        "providers"
    }

    fn served_as(&self) -> Level {
        Level::Provider
    }

    fn get(&self, request: &Request) -> Option<Vec<u8>> {
        if self.providers.is_empty() {
            return None;
        }
        let cubin = self
            .serving(request)
            .iter()
            .find_map(|p| p.get(request.plan))?;
        self.recorder.record_local(Stats {
            provider_hits: 1,
            ..Stats::default()
        });
        Some(cubin)
    }

    fn describe(&self, request: &Request) -> String {
        let serving = self.serving(request);
        if serving.is_empty() {
            return format!(
                "no provider for {} ({} found)",
                request.plan.target(),
                self.providers.len()
            );
        }
        serving
            .iter()
            .map(|p| {
                let mut text = format!("provider {} ({})", p.path().display(), p.target());
                if let Some(why) = p.skipped_reason(request.plan) {
                    text.push_str(&format!(", which left it out: {why}"));
                }
                text
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
