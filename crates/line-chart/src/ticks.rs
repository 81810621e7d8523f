//! Where an axis puts its ticks and how it writes their numbers.

/// The numbers 1, 2 and 5 times a power of ten from `start` to `end`: ticks a reader can
/// interpolate between on a logarithmic axis.
pub(crate) fn one_two_five(start: f64, end: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(start.log10().floor());
    while decade <= end {
        for step in [1.0, 2.0, 5.0] {
            let tick = decade * step;
            if (start..=end).contains(&tick) {
                ticks.push(tick);
            }
        }
        decade *= 10.0;
    }
    ticks
}

/// A tick of [`one_two_five`] as a reader writes it: `12,345` from 1 up, with thousands
/// separators; below 1 with its one significant digit, `0.5`, `0.02`.
pub(crate) fn tick_label(value: f64) -> String {
    if value.abs() >= 1.0 || value == 0.0 {
        return thousands(value);
    }
    let decimals = -value.abs().log10().floor();
    // At most 15 for any tick an f64 chart can show; the cast keeps the integer part.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let decimals = decimals.clamp(0.0, 15.0) as usize;
    format!("{value:.decimals$}")
}

/// `12345.0` as `12,345`: whole numbers with thousands separators.
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if value < -0.5 {
        out.insert(0, '-');
    }
    out
}
