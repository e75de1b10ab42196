//! The policy's validation of each path it is given, and the wire carrying a policy exactly: any
//! path gives a canonical entry or a typed error (see `sandbox_fuzz_checks::wire`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _outcomes = sandbox_fuzz_checks::wire::check_policy(data);
});
