//! What the user configured about compaction, and the token limits that follow from a window.

use serde_json::Value;

/// The summary's reserve below the window (Claude Code's 20,000 output tokens for the summary).
const SUMMARY_RESERVE: u64 = 20_000;
/// The buffer below the reserve where autocompact starts (Claude Code's 13,000).
const AUTOCOMPACT_BUFFER: u64 = 13_000;
/// Requests are refused this far below the window (Claude Code's 3,000).
const HARD_LIMIT_BUFFER: u64 = 3_000;
/// The window assumed when neither the model table nor the settings know it.
const FALLBACK_WINDOW: u64 = 200_000;

/// How compaction is configured for a session: `autoCompactEnabled` in the settings, and the
/// environment variables Claude Code reads.
///
/// ```
/// use cairn_context::pipeline::PipelineSettings;
/// use serde_json::json;
///
/// let env = |name: &str| (name == "CLAUDE_CODE_AUTO_COMPACT_WINDOW").then(|| "40000".to_string());
/// let settings = PipelineSettings::from_env_and_settings(env, &json!({"autoCompactEnabled": false}));
/// assert_eq!(settings, PipelineSettings {
///     auto_compact: false,
///     compact: true,
///     window_override: Some(40_000),
///     autocompact_percent: None,
/// });
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PipelineSettings {
    /// Autocompact before a request when the thresholds say so (`autoCompactEnabled`, off with
    /// `DISABLE_AUTO_COMPACT`). `/compact` and the API's "prompt is too long" still compact.
    pub auto_compact: bool,
    /// Any compaction at all, `/compact` included (off with `DISABLE_COMPACT`).
    pub compact: bool,
    /// A smaller window for the thresholds (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`): the model's
    /// window is capped at it.
    pub window_override: Option<u64>,
    /// Autocompact at this percentage of the usable window instead, when that comes earlier
    /// (`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`, 1–100).
    pub autocompact_percent: Option<f64>,
}

impl Default for PipelineSettings {
    fn default() -> Self {
        PipelineSettings {
            auto_compact: true,
            compact: true,
            window_override: None,
            autocompact_percent: None,
        }
    }
}

impl PipelineSettings {
    /// The settings from the environment (`env` looks a variable up: the process's, or the
    /// run's with the settings' `env` laid over it) and the merged settings value. A value
    /// that does not parse (a window of `abc`, a percentage of 0 or 250) is ignored, as Claude
    /// Code ignores it.
    pub fn from_env_and_settings(env: impl Fn(&str) -> Option<String>, settings: &Value) -> Self {
        let enabled_in_settings = settings
            .get("autoCompactEnabled")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let truthy = |name: &str| env(name).is_some_and(|value| is_truthy(&value));
        PipelineSettings {
            auto_compact: enabled_in_settings && !truthy("DISABLE_AUTO_COMPACT"),
            compact: !truthy("DISABLE_COMPACT"),
            window_override: env("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
                .and_then(|value| value.trim().parse::<u64>().ok())
                .filter(|&window| window > 0),
            autocompact_percent: env("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
                .and_then(|value| value.trim().parse::<f64>().ok())
                .filter(|&percent| percent > 0.0 && percent <= 100.0),
        }
    }

    /// The limits for a request to a model with `model_window` tokens (`None`: unknown).
    pub fn limits(&self, model_window: Option<u64>) -> Limits {
        let window = match (model_window, self.window_override) {
            (Some(model), Some(cap)) => model.min(cap),
            (Some(window), None) | (None, Some(window)) => window,
            (None, None) => FALLBACK_WINDOW,
        };
        // The fixed margins are Claude Code's for a 200K window; a small window (the tests',
        // through CLAUDE_CODE_AUTO_COMPACT_WINDOW) gets the same proportions instead.
        let reserve = SUMMARY_RESERVE.min(window / 10);
        let buffer = AUTOCOMPACT_BUFFER.min(window * 13 / 200);
        let usable = window - reserve;
        let mut autocompact_at = usable - buffer;
        if let Some(percent) = self.autocompact_percent {
            autocompact_at = autocompact_at.min((usable as f64 * percent / 100.0) as u64);
        }
        Limits {
            window,
            collapse_at: autocompact_at / 10 * 9,
            autocompact_at,
            hard_limit: window - HARD_LIMIT_BUFFER.min(window * 3 / 200),
        }
    }
}

/// Claude Code's reading of a flag variable: `1`, `true`, `yes`, `on`, in any case.
fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// The token limits of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The window the thresholds are taken from.
    pub window: u64,
    /// Collapse older turns when the estimate reaches this (90% of the autocompact threshold,
    /// 150,300 at 200K), so autocompact is needed only when collapsing cannot help.
    pub collapse_at: u64,
    /// Autocompact when the estimate reaches this (window − 20,000 − 13,000 at 200K).
    pub autocompact_at: u64,
    /// Refuse to send at or above this (window − 3,000 at 200K).
    pub hard_limit: u64,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        }
    }

    #[test]
    fn defaults_compact_automatically() {
        assert_eq!(
            PipelineSettings::from_env_and_settings(env_of(&[]), &json!({})),
            PipelineSettings::default()
        );
    }

    #[test]
    fn the_environment_and_settings_turn_compaction_off() {
        let settings = PipelineSettings::from_env_and_settings(
            env_of(&[
                ("DISABLE_AUTO_COMPACT", "1"),
                ("DISABLE_COMPACT", "true"),
                ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50"),
            ]),
            &json!({"autoCompactEnabled": true}),
        );
        assert_eq!(
            settings,
            PipelineSettings {
                auto_compact: false,
                compact: false,
                window_override: None,
                autocompact_percent: Some(50.0),
            }
        );
        let ignored = PipelineSettings::from_env_and_settings(
            env_of(&[
                ("DISABLE_AUTO_COMPACT", "0"),
                ("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "big"),
                ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "250"),
            ]),
            &json!({"autoCompactEnabled": "no"}),
        );
        assert_eq!(ignored, PipelineSettings::default());
    }

    #[test]
    fn limits_at_the_real_window_are_claude_codes() {
        let limits = PipelineSettings::default().limits(Some(200_000));
        assert_eq!(
            limits,
            Limits {
                window: 200_000,
                collapse_at: 150_300,
                autocompact_at: 167_000,
                hard_limit: 197_000,
            }
        );
    }

    #[test]
    fn a_window_override_caps_the_window_and_scales_the_margins() {
        let settings = PipelineSettings {
            window_override: Some(20_000),
            ..PipelineSettings::default()
        };
        assert_eq!(
            settings.limits(Some(200_000)),
            Limits {
                window: 20_000,
                collapse_at: 15_030,
                autocompact_at: 16_700,
                hard_limit: 19_700,
            }
        );
        let percent = PipelineSettings {
            autocompact_percent: Some(50.0),
            ..PipelineSettings::default()
        };
        assert_eq!(percent.limits(Some(200_000)).autocompact_at, 90_000);
        assert_eq!(PipelineSettings::default().limits(None).window, 200_000);
    }
}
