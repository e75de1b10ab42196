//! The launcher's argument decoding (`sandbox_core::backend::wire::decode`): any argument vector
//! gives a request that holds up or a typed error with a one-line refusal (see `sandbox_fuzz_checks::wire`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _outcome = sandbox_fuzz_checks::wire::check_wire(data);
});
