//! The conformance suite every backend runs (to come).
