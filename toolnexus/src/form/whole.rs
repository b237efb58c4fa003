//! Whole numbers written as doubles. Clients that carry JSON through protobuf's `Struct`
//! (the official A2A SDKs among them) send every number as a double, so the `5000000` a
//! person typed arrives as `5000000.0`; a form's integer field, and a tool's `u64`
//! argument, mean the integer.

use serde_json::{Number, Value};

/// Rewrites every double in `value` that holds a whole number (within `i64` or `u64`) as
/// that integer, at any depth; other numbers stay as they are.
///
/// ```
/// use toolnexus::serde_json::json;
///
/// let mut edited = json!({"amount": 5000000.0, "rate": 0.5, "lines": [{"qty": 2.0}]});
/// toolnexus::form::whole_numbers(&mut edited);
/// assert_eq!(edited, json!({"amount": 5000000, "rate": 0.5, "lines": [{"qty": 2}]}));
/// assert!(edited["amount"].is_u64());
/// ```
pub fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(whole) = whole(n) {
                *n = whole;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// Whether `value` holds a double [`whole_numbers`] would rewrite.
pub(crate) fn has_whole_doubles(value: &Value) -> bool {
    match value {
        Value::Number(n) => whole(n).is_some(),
        Value::Array(items) => items.iter().any(has_whole_doubles),
        Value::Object(map) => map.values().any(has_whole_doubles),
        _ => false,
    }
}

/// Whether `value` is a whole number, written as an integer or as a whole double.
pub(crate) fn is_whole(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_number().and_then(whole).is_some()
}

/// The integer a double holds, when it is a whole one in range; `None` for an integer
/// already, or any other number.
fn whole(n: &Number) -> Option<Number> {
    if !n.is_f64() {
        return None;
    }
    let x = n.as_f64()?;
    if !x.is_finite() || x.fract() != 0.0 {
        return None;
    }
    // The bounds are powers of two, exact as doubles: a double below them converts
    // exactly, and one at or above them does not fit.
    const I64_MIN: f64 = -9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    if (I64_MIN..0.0).contains(&x) {
        Some(Number::from(x as i64))
    } else if (0.0..U64_END).contains(&x) {
        Some(Number::from(x as u64))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{has_whole_doubles, is_whole, whole_numbers};

    #[test]
    fn whole_doubles_become_integers_and_nothing_else_changes() {
        let mut value = json!({
            "big": 5000000.0, "negative": -3.0, "zero": -0.0, "half": 2.5,
            "int": 7, "huge": 1e300, "text": "5.0", "nested": [[1.0], {"x": 4.0}]
        });
        assert!(has_whole_doubles(&value));
        whole_numbers(&mut value);
        assert_eq!(
            value,
            json!({
                "big": 5000000, "negative": -3, "zero": 0, "half": 2.5,
                "int": 7, "huge": 1e300, "text": "5.0", "nested": [[1], {"x": 4}]
            })
        );
        assert!(value["big"].is_u64() && value["negative"].is_i64());
        assert!(
            value["huge"].is_f64(),
            "beyond u64: kept as the double it is"
        );
        assert!(!has_whole_doubles(&value));
    }

    #[test]
    fn the_edges_of_the_integer_ranges() {
        let two = 2f64;
        let mut edges = json!([-two.powi(63), two.powi(64), two.powi(63)]);
        whole_numbers(&mut edges);
        assert_eq!(edges[0], json!(i64::MIN));
        assert!(edges[1].is_f64(), "2^64 does not fit a u64");
        assert_eq!(edges[2], json!(1u64 << 63));
    }

    #[test]
    fn whole_means_an_integer_or_a_whole_double() {
        for yes in [json!(3), json!(-3), json!(3.0), json!(u64::MAX)] {
            assert!(is_whole(&yes), "{yes}");
        }
        for no in [json!(3.5), json!("3"), Value::Null, json!(1e300)] {
            assert!(!is_whole(&no), "{no}");
        }
    }

    #[test]
    fn a_form_and_a_decoded_answer_take_a_whole_double_as_an_integer() {
        let form = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let form = form.as_object().cloned().unwrap_or_default();
        assert!(crate::form::check_data(&form, Some(&json!({"n": 3.0}))).is_ok());
        let half = crate::form::check_data(&form, Some(&json!({"n": 3.5})));
        assert_eq!(
            half.map_err(|e| e.to_string()),
            Err("`n`: must be a whole number".to_owned())
        );

        #[derive(serde::Deserialize)]
        struct N {
            n: u32,
        }
        let sent = crate::Answer::ok("r").with_data(json!({"n": 3.0}));
        assert_eq!(sent.data_as::<N>().map(|d| d.n).ok(), Some(3));
        let half = crate::Answer::ok("r").with_data(json!({"n": 3.5}));
        assert!(half.data_as::<N>().is_err());
    }
}
