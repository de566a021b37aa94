//! When to send a failed request again, and how long to wait first.

use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::ModelError;

/// The longest wait cairn accepts from a server's `retry-after`: a longer one would look like
/// a hang, and the next attempt can ask again.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The environment variable that sets how many times a failed request is retried.
pub(crate) const MAX_RETRIES_VAR: &str = "CAIRN_MAX_RETRIES";

/// Attempts in all when nothing is listening at the address (the connection is refused): a
/// couple of quick retries cover a local server or proxy that is restarting; one that is not
/// running will not start within the minutes the full backoff would wait.
pub(crate) const REFUSED_ATTEMPTS: u32 = 3;

/// The wait between attempts when the connection is refused.
pub(crate) const REFUSED_DELAY: Duration = Duration::from_millis(250);

/// What a failed attempt ran into, for how patiently it is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Setback {
    /// The server is there but cannot answer now, or the connection or stream broke:
    /// overload, rate limits, 5xx, timeouts. Retried with the policy's full backoff.
    Transient,
    /// Nothing is listening at the address. Retried [`REFUSED_ATTEMPTS`] times at most,
    /// [`REFUSED_DELAY`] apart, so that a wrong or dead base URL fails within a second.
    NothingListening,
}

/// How many times to try a request and how long to wait between tries.
///
/// The wait grows exponentially from `base_delay` (×2 per retry) up to `max_delay`, less up to
/// a quarter at random so that many clients hit by the same outage do not retry in step. A
/// server's `retry-after-ms` or `retry-after` header replaces the computed wait (capped at
/// [`MAX_RETRY_AFTER`]).
///
/// ```
/// use std::time::Duration;
/// use cairn_llm::RetryPolicy;
///
/// let policy = RetryPolicy::default();
/// assert_eq!(policy.max_attempts, 10);
/// // The server's word wins over the backoff.
/// assert_eq!(policy.delay_for(3, Some(Duration::from_secs(2))), Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 means never retry.
    pub max_attempts: u32,
    /// The wait before the first retry (500 ms by default); each later one waits twice the
    /// one before.
    pub base_delay: Duration,
    /// The longest computed wait (32 s by default); a server's `retry-after` is capped at
    /// [`MAX_RETRY_AFTER`] instead.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(32),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn never() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The default policy, with the number of retries from `CAIRN_MAX_RETRIES` when it is set
    /// (`0` disables retrying; `3` means up to four attempts).
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_max_retries(std::env::var(MAX_RETRIES_VAR).ok().as_deref())
    }

    /// The default policy with `max_retries` (the text of `CAIRN_MAX_RETRIES`) applied.
    pub fn from_max_retries(max_retries: Option<&str>) -> Result<Self, ModelError> {
        let mut policy = RetryPolicy::default();
        let Some(text) = max_retries.map(str::trim).filter(|text| !text.is_empty()) else {
            return Ok(policy);
        };
        let retries: u32 = text.parse().map_err(|_| ModelError::InvalidSetting {
            variable: MAX_RETRIES_VAR,
            value: text.to_string(),
            expected: "a whole number of retries, such as 3 (0 turns retrying off)",
        })?;
        policy.max_attempts = retries.saturating_add(1);
        Ok(policy)
    }

    /// How long to wait before retry number `retry` (1 for the first retry), given the
    /// server's `retry_after` if it sent one.
    pub fn delay_for(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(MAX_RETRY_AFTER),
            None => self.backoff(retry, fastrand::f64()),
        }
    }

    /// Attempts in all (the first included) for a request whose last attempt ran into
    /// `setback`: never more than the policy allows, so `CAIRN_MAX_RETRIES=0` still means one.
    pub(crate) fn attempts_after(&self, setback: Setback) -> u32 {
        let allowed = self.max_attempts.max(1);
        match setback {
            Setback::Transient => allowed,
            Setback::NothingListening => allowed.min(REFUSED_ATTEMPTS),
        }
    }

    /// The wait before retry number `retry` after `setback`.
    pub(crate) fn delay_after(
        &self,
        setback: Setback,
        retry: u32,
        retry_after: Option<Duration>,
    ) -> Duration {
        match setback {
            Setback::Transient => self.delay_for(retry, retry_after),
            Setback::NothingListening => REFUSED_DELAY.min(self.max_delay),
        }
    }

    /// The exponential backoff for retry number `retry`, reduced by `jitter` (0.0–1.0) times
    /// a quarter.
    fn backoff(&self, retry: u32, jitter: f64) -> Duration {
        let doublings = retry.saturating_sub(1).min(30);
        let grown = self.base_delay.saturating_mul(1u32 << doublings);
        let capped = grown.min(self.max_delay);
        capped.mul_f64(1.0 - 0.25 * jitter.clamp(0.0, 1.0))
    }
}

/// HTTP statuses worth retrying: timeouts, conflicts, rate limits, server errors, overload.
/// Everything else (400, 401, 403, 404, 413, …) fails the same way the next time.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// Whether a request failed because nothing listens at the address: an I/O error of kind
/// `ConnectionRefused` somewhere in its sources (reqwest wraps hyper's, which wraps the
/// socket's).
pub(crate) fn is_connection_refused(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        current = error.source();
    }
    false
}

/// SSE `error` event types worth retrying.
pub(crate) fn is_retryable_stream_error(error_type: &str) -> bool {
    matches!(error_type, "overloaded_error" | "api_error")
}

/// The wait a response asks for: `retry-after-ms` (milliseconds) first, then `retry-after`
/// (seconds). An HTTP-date `retry-after` is ignored.
pub(crate) fn retry_after_from_headers(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    let wait = if let Some(ms) = number("retry-after-ms") {
        Duration::from_secs_f64(ms / 1000.0)
    } else {
        Duration::from_secs_f64(number("retry-after")?)
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use reqwest::header::HeaderValue;

    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy::default()
    }

    #[test]
    fn backoff_doubles_from_the_base() {
        let delays: Vec<u128> = (1..=5)
            .map(|retry| policy().backoff(retry, 0.0).as_millis())
            .collect();
        assert_eq!(delays, vec![500, 1000, 2000, 4000, 8000]);
    }

    #[test]
    fn backoff_is_capped() {
        assert_eq!(policy().backoff(7, 0.0), Duration::from_secs(32));
        assert_eq!(policy().backoff(40, 0.0), Duration::from_secs(32));
        assert_eq!(policy().backoff(u32::MAX, 0.0), Duration::from_secs(32));
    }

    #[test]
    fn jitter_takes_off_at_most_a_quarter() {
        assert_eq!(policy().backoff(2, 1.0), Duration::from_millis(750));
        for retry in 1..=12 {
            let full = policy().backoff(retry, 0.0);
            let delay = policy().delay_for(retry, None);
            assert!(
                delay <= full && delay >= full.mul_f64(0.75),
                "{retry}: {delay:?}"
            );
        }
    }

    #[test]
    fn a_refused_connection_gets_a_few_quick_attempts_and_overload_the_full_backoff() {
        let policy = policy();
        assert_eq!(policy.attempts_after(Setback::Transient), 10);
        assert_eq!(policy.attempts_after(Setback::NothingListening), 3);
        for retry in 1..=5 {
            assert_eq!(
                policy.delay_after(Setback::NothingListening, retry, None),
                Duration::from_millis(250)
            );
        }
        assert_eq!(
            policy.delay_after(Setback::Transient, 1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        // Never more attempts than the policy allows.
        assert_eq!(
            RetryPolicy::never().attempts_after(Setback::NothingListening),
            1
        );
        let two = RetryPolicy {
            max_attempts: 2,
            ..policy
        };
        assert_eq!(two.attempts_after(Setback::NothingListening), 2);
    }

    #[test]
    fn a_refusal_is_found_under_the_errors_that_wrap_it() {
        #[derive(Debug)]
        struct Wrapper(std::io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("error sending request")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let refused = Wrapper(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        let reset = Wrapper(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(is_connection_refused(&refused));
        assert!(!is_connection_refused(&reset));
    }

    #[test]
    fn retry_after_replaces_the_backoff_and_is_capped() {
        assert_eq!(
            policy().delay_for(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            policy().delay_for(1, Some(Duration::from_secs(3600))),
            MAX_RETRY_AFTER
        );
    }

    #[test]
    fn retry_after_headers_are_read() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after_from_headers(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(
            retry_after_from_headers(&headers),
            Some(Duration::from_secs(2))
        );
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(
            retry_after_from_headers(&headers),
            Some(Duration::from_millis(1500))
        );
        headers.insert("retry-after-ms", HeaderValue::from_static("soon"));
        assert_eq!(
            retry_after_from_headers(&headers),
            Some(Duration::from_secs(2))
        );
        headers.insert("retry-after", HeaderValue::from_static("86400"));
        assert_eq!(retry_after_from_headers(&headers), Some(MAX_RETRY_AFTER));
        headers.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after_from_headers(&headers), None);
    }

    #[test]
    fn statuses_are_classified() {
        let retried: Vec<u16> = (100..600).filter(|s| is_retryable_status(*s)).collect();
        assert_eq!(retried, vec![408, 409, 429, 500, 502, 503, 504, 529]);
        for status in [400, 401, 403, 404, 413, 422, 501] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }

    #[test]
    fn errors_are_classified() {
        let stream_error = |error_type: &str| ModelError::StreamError {
            error_type: error_type.to_string(),
            message: String::new(),
        };
        assert!(stream_error("overloaded_error").is_retryable());
        assert!(stream_error("api_error").is_retryable());
        assert!(!stream_error("invalid_request_error").is_retryable());
        assert!(ModelError::StreamEndedEarly.is_retryable());
        assert!(
            ModelError::Connection {
                message: String::new()
            }
            .is_retryable()
        );
        assert!(!ModelError::Cancelled.is_retryable());
        assert!(
            !ModelError::Unauthorized {
                variable: "ANTHROPIC_API_KEY",
                message: String::new()
            }
            .is_retryable()
        );
    }

    #[test]
    fn max_retries_comes_from_the_environment_value() {
        assert_eq!(RetryPolicy::from_max_retries(None).ok(), Some(policy()));
        assert_eq!(
            RetryPolicy::from_max_retries(Some("3"))
                .ok()
                .map(|p| p.max_attempts),
            Some(4)
        );
        assert_eq!(
            RetryPolicy::from_max_retries(Some("0"))
                .ok()
                .map(|p| p.max_attempts),
            Some(1)
        );
        let error = RetryPolicy::from_max_retries(Some("lots")).err();
        assert_eq!(
            error.map(|e| e.to_string()),
            Some(
                "CAIRN_MAX_RETRIES is `lots`: expected a whole number of retries, such as 3 (0 \
                 turns retrying off)"
                    .to_string()
            )
        );
    }
}
