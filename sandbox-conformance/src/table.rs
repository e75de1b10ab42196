//! The suite's cases, in the order they run, each with the classes it applies to.

#[cfg(unix)]
use crate::cases::{by_class::*, confined::*, contract::*, every::*, served::*};
use crate::class::{Class, ALL, BUILT, CONFINED, REFUSING, SERVED};

/// One case of the suite.
#[derive(Clone, Copy)]
pub struct Case {
    /// Its name, as the report and `docs/backends.md` give it.
    pub name: &'static str,
    /// The classes it runs for.
    pub applies: &'static [Class],
    #[cfg(unix)]
    pub(crate) run: fn(&crate::cases::Env<'_>) -> Result<(), String>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("name", &self.name)
            .field("applies", &self.applies)
            .finish()
    }
}

macro_rules! cases {
    ($($name:ident: $applies:expr,)*) => {
        /// The cases, in the order they run.
        pub const CASES: &[Case] = &[$(Case {
            name: stringify!($name),
            applies: $applies,
            #[cfg(unix)]
            run: $name,
        }),*];
    };
}

cases! {
    support_answers_the_same_each_time: ALL,
    the_exit_flag_exits_at_once: ALL,
    arguments_of_another_format_are_refused: ALL,
    a_confined_start_by_hand_is_refused: ALL,
    a_canary_inside_the_policy_is_refused_on_one_line: ALL,
    a_fault_before_each_phase_is_a_refusal: ALL,
    launch_command_refuses_without_a_sandbox: &[Class::NoBackend],
    launch_command_builds_a_launch: BUILT,
    a_launch_is_refused_with_the_reason_support_gave: REFUSING,
    verify_starts_with_the_enforcement_check: BUILT,
    the_program_runs_after_the_check: CONFINED,
    the_check_passes_in_the_confined_program: CONFINED,
    what_the_suite_adds_is_refused_too: CONFINED,
    what_must_still_work_works: CONFINED,
    the_exit_status_passes_through: CONFINED,
    a_listed_program_can_replace_the_program: CONFINED,
    a_program_outside_the_exec_list_is_not_executed: CONFINED,
    an_exec_that_fails_is_a_refusal: CONFINED,
    a_refusal_arrives_typed_to_an_application_without_standard_streams: CONFINED,
    the_program_starts_as_the_backend_says: CONFINED,
    the_backend_s_refusal_errors_prove_a_refusal: ALL,
    the_provisions_hold: CONFINED,
    grants_on_demand_are_served_or_refused: CONFINED,
    served_the_program_runs_after_the_check: SERVED,
    served_the_exit_status_passes_through: SERVED,
    served_the_report_probe_passes: SERVED,
    served_refusals_arrive_typed: SERVED,
    served_a_fault_before_each_phase_is_a_typed_refusal: SERVED,
    served_a_thousand_launches_four_at_a_time_leave_nothing: SERVED,
    served_the_program_holds_no_descriptor_of_the_server: SERVED,
    served_a_nul_byte_is_refused_not_split: SERVED,
    served_a_copy_of_the_server_dropped_in_a_fork_stops_nothing: SERVED,
    served_no_launch_after_the_application_changed_its_user: SERVED,
    served_a_server_started_without_standard_streams_serves: SERVED,
    served_a_timeout_a_kill_and_a_drop_end_the_program: SERVED,
    served_the_program_dies_with_the_application: SERVED,
    served_a_kill_at_the_memory_bound_is_named: SERVED,
    served_a_child_parked_before_its_request_takes_its_bounds: SERVED,
}
