//! The clock operations read: the system time, or a fixed instant the caller chose (for
//! reproducible ids and output). A fixed clock also makes every measured duration 0.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Now, as the application sees it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    fixed: Option<f64>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock { fixed: None }
    }

    /// A clock stopped at `unix_seconds`.
    pub fn fixed(unix_seconds: f64) -> Clock {
        Clock {
            fixed: Some(unix_seconds),
        }
    }

    /// Whether the clock is fixed, in which case measured durations read 0.
    pub fn is_fixed(&self) -> bool {
        self.fixed.is_some()
    }

    /// Now, in unix seconds (fractional).
    pub fn now(&self) -> f64 {
        self.fixed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0)
        })
    }

    /// Now, in whole unix seconds (commit timestamps).
    pub fn now_secs(&self) -> i64 {
        self.now().floor() as i64
    }

    /// Starts measuring a duration.
    pub fn timer(&self) -> Timer {
        Timer {
            start: Instant::now(),
            fixed: self.fixed.is_some(),
        }
    }
}

/// A running duration measurement.
#[derive(Debug, Clone, Copy)]
pub struct Timer {
    start: Instant,
    fixed: bool,
}

impl Timer {
    /// Milliseconds since start (0 with a fixed clock), rounded to microseconds.
    pub fn ms(&self) -> f64 {
        if self.fixed {
            0.0
        } else {
            round_ms(self.start.elapsed().as_secs_f64() * 1e3)
        }
    }
}

/// Milliseconds with microsecond precision (so printed figures carry no float noise).
pub fn round_ms(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
}
