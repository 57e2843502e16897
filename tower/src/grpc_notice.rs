//! The warning a [`GuardLayer`](crate::GuardLayer) gives, once, when its classifier is
//! shown a gRPC answer it cannot judge.

use std::sync::atomic::{AtomicBool, Ordering};

/// One layer's "said once" state: the system to name and whether the warning was given.
/// Shared (behind one `Arc`) by the layer and every service and call it makes.
#[derive(Debug)]
pub(crate) struct GrpcNotice {
    system: Box<str>,
    warned: AtomicBool,
}

impl GrpcNotice {
    pub(crate) fn new(system: &str) -> Self {
        GrpcNotice {
            system: system.into(),
            warned: AtomicBool::new(false),
        }
    }

    /// Whether the warning was given already: read before asking the classifier, so a
    /// misconfigured service pays for the check only until it has been told.
    pub(crate) fn given(&self) -> bool {
        self.warned.load(Ordering::Relaxed)
    }

    /// Warns that a gRPC answer went through a classifier that cannot read gRPC
    /// statuses, the first time only.
    pub(crate) fn warn(&self) {
        if self.warned.swap(true, Ordering::Relaxed) {
            return;
        }
        tracing::warn!(
            target: "outbound_guard",
            system = &*self.system,
            "{} answered gRPC through outbound_guard_tower::GuardLayer, whose classifier reads \
             HTTP statuses only: gRPC errors arrive as HTTP 200 with a grpc-status, so none of \
             them counts and the breaker never opens; guard a tonic channel with \
             outbound_guard_tonic::GrpcGuardLayer",
            self.system
        );
    }
}
