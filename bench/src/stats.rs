//! Medians and ranges of a set of measurements.

use std::time::Duration;

/// Measurements of one thing, sorted, in the unit the caller chose (microseconds for times).
#[derive(Debug, Clone, Default)]
pub struct Summary {
    sorted: Vec<f64>,
}

impl Summary {
    /// Summarises `values`.
    pub fn of(mut values: Vec<f64>) -> Self {
        values.sort_by(f64::total_cmp);
        Self { sorted: values }
    }

    /// Summarises `durations`, in microseconds.
    pub fn of_durations(durations: &[Duration]) -> Self {
        Self::of(durations.iter().map(|d| d.as_secs_f64() * 1e6).collect())
    }

    /// The median, or 0 with no measurement.
    pub fn median(&self) -> f64 {
        let n = self.sorted.len();
        match n {
            0 => 0.0,
            _ if n % 2 == 1 => self.sorted[n / 2],
            _ => (self.sorted[n / 2 - 1] + self.sorted[n / 2]) / 2.0,
        }
    }

    /// The smallest, or 0 with no measurement.
    pub fn min(&self) -> f64 {
        self.sorted.first().copied().unwrap_or(0.0)
    }

    /// The largest, or 0 with no measurement.
    pub fn max(&self) -> f64 {
        self.sorted.last().copied().unwrap_or(0.0)
    }
}

/// Microseconds as text: `812 µs`, `3.41 ms`.
pub fn micros(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        let s = Summary::of(vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.median(), s.min(), s.max()), (2.5, 1.0, 4.0));
        assert_eq!(Summary::of(vec![5.0, 1.0, 9.0]).median(), 5.0);
        assert_eq!(Summary::default().median(), 0.0);
    }

    #[test]
    fn times_read_in_the_unit_that_suits_them() {
        assert_eq!(micros(812.4), "812 µs");
        assert_eq!(micros(3412.0), "3.41 ms");
        assert_eq!(micros(12_345.0), "12.3 ms");
    }
}
