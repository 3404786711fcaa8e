//! The display host behind the `DISPLAY` extension instruction (graphics).
//!
//! CMU NESL drew through a separate plotting process that its Lisp front end started;
//! here the driver installs a [`DisplayHost`] (a web page, SVG files) with
//! [`set_display`], and every `DISPLAY` instruction hands its requests to it. A request
//! is an operation code and a vector of integers (coordinates in window pixels, colour
//! numbers, character codes); the answer is a vector of integers. What the codes mean
//! is agreed between the window library of the front end and the driver's displays;
//! this crate only carries them.

use std::sync::{Arc, Mutex};

/// Something that draws windows and gives back input: the driver's displays.
pub trait DisplayHost: Send + Sync {
    /// Carries out request `code` with its arguments; the answer, or a message saying
    /// why it could not be done (the program stops with it).
    fn request(&self, code: i64, args: &[i64]) -> Result<Vec<i64>, String>;
}

static HOST: Mutex<Option<Arc<dyn DisplayHost>>> = Mutex::new(None);

/// Installs the display that `DISPLAY` instructions use from now on (`None`: none, and
/// they fail with a message saying so).
pub fn set_display(host: Option<Arc<dyn DisplayHost>>) {
    if let Ok(mut h) = HOST.lock() {
        *h = host;
    }
}

/// The display installed by [`set_display`], if any.
pub fn display() -> Option<Arc<dyn DisplayHost>> {
    HOST.lock().ok().and_then(|h| h.clone())
}

/// Runs the requests of one `DISPLAY` instruction, in instance order: `codes[i]` with
/// the `lengths[i]` arguments that follow in `args`. The answers, concatenated, and their
/// lengths; or the message of the first request that failed.
pub(crate) fn run_requests(
    codes: &[i64],
    args: &[i64],
    lengths: &[i64],
) -> Result<(Vec<i64>, Vec<i64>), String> {
    if codes.len() != lengths.len() {
        return Err(format!(
            "DISPLAY: {} requests but {} argument lists",
            codes.len(),
            lengths.len()
        ));
    }
    if codes.is_empty() {
        // No instance asked for anything (a lifted call on an empty sequence).
        return Ok((Vec::new(), Vec::new()));
    }
    let host = display().ok_or_else(|| {
        "graphics: no display (choose one with --display web or --display svg:DIR)".to_string()
    })?;
    let mut out = Vec::new();
    let mut lens = Vec::with_capacity(codes.len());
    let mut at = 0usize;
    for (&code, &len) in codes.iter().zip(lengths) {
        let len =
            usize::try_from(len).map_err(|_| "DISPLAY: a negative argument length".to_string())?;
        let part = args
            .get(at..at + len)
            .ok_or_else(|| "DISPLAY: the argument lengths exceed the arguments".to_string())?;
        at += len;
        let r = host.request(code, part)?;
        lens.push(r.len() as i64);
        out.extend(r);
    }
    Ok((out, lens))
}
