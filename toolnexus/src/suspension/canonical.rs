//! The JSON Canonicalization Scheme (RFC 8785): the one byte form of a JSON value that
//! every language can rebuild, so a digest or a signature made over it here can be checked
//! anywhere without this crate.

use serde_json::{Number, Value};

/// The RFC 8785 (JCS) bytes of `value`: object members sorted by their keys' UTF-16 code
/// units, no whitespace, strings escaped only where JSON requires it, and numbers written
/// as ECMAScript writes an IEEE 754 double (`1e+21`, `1e-7`, `4.5`, `-0` as `0`, the
/// shortest digits that read back to the same double).
///
/// Numbers are doubles in JCS, so an integer beyond 2^53 is written as the double nearest
/// to it, as any other JCS implementation writes it.
///
/// ```
/// use toolnexus::{canonical_json, serde_json::json};
///
/// let bytes = canonical_json(&json!({"b": [1.0, 1e21, "é\n"], "a": null}));
/// assert_eq!(bytes, r#"{"a":null,"b":[1,1e+21,"é\n"]}"#.as_bytes());
/// ```
pub fn canonical_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    write_value(value, Integers::AsDoubles, &mut out);
    out
}

/// How integers are written: as JCS writes the double nearest to them, or with all their
/// digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Integers {
    AsDoubles,
    /// Every integer serde_json holds (an `i64` or a `u64`) with all its digits. Up to 2^53
    /// that is the JCS text; beyond it a double would round two integers to one text, so a
    /// digest that must tell every value apart writes them so.
    Exact,
}

/// [`canonical_json`], with integers written as `integers` says.
pub(crate) fn canonical_with(value: &Value, integers: Integers) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    write_value(value, integers, &mut out);
    out
}

fn write_value(value: &Value, integers: Integers, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, integers, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, integers, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(key, out);
                out.push(b':');
                write_value(value, integers, out);
            }
            out.push(b'}');
        }
    }
}

fn write_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let mut start = 0;
    for (i, byte) in text.bytes().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&text.as_bytes()[start..i]);
        start = i + 1;
        if escape.is_empty() {
            // Any other control character: `\u00` and two lowercase hex digits.
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
    }
    out.extend_from_slice(&text.as_bytes()[start..]);
    out.push(b'"');
}

fn write_number(number: &Number, integers: Integers, out: &mut Vec<u8>) {
    if integers == Integers::Exact {
        if let Some(n) = number.as_i64() {
            out.extend_from_slice(n.to_string().as_bytes());
            return;
        }
        if let Some(n) = number.as_u64() {
            out.extend_from_slice(n.to_string().as_bytes());
            return;
        }
    }
    // serde_json's numbers are i64, u64 or finite f64; JCS reads them all as doubles.
    let value = number.as_f64().unwrap_or(0.0);
    write_double(value, out);
}

/// ECMAScript's `Number.prototype.toString` for a finite double (ECMA-262, 7.1.12.1).
fn write_double(value: f64, out: &mut Vec<u8>) {
    if value == 0.0 {
        // Both zeros are written `0`.
        out.push(b'0');
        return;
    }
    if value.is_sign_negative() {
        out.push(b'-');
    }
    // The shortest digits that read back to the same double, a tie going to the even
    // digit, as ECMAScript chooses them; `ryu` writes them as `ddd.ddd` or `d.ddde±x`.
    let mut buffer = ryu::Buffer::new();
    let (digits, n) = digits_and_point(buffer.format_finite(value.abs()));
    let k = digits.len() as i32;
    if k <= n && n <= 21 {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.extend_from_slice(&digits[..n as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-n) as usize));
        out.extend_from_slice(&digits);
    } else {
        out.push(digits[0]);
        if k > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if n - 1 < 0 { b'-' } else { b'+' });
        out.extend_from_slice((n - 1).abs().to_string().as_bytes());
    }
}

/// The significant digits of a decimal text (`12.50`, `0.001`, `1.5e-7`) and where its
/// decimal point falls: the value is `0.digits × 10^n`.
fn digits_and_point(text: &str) -> (Vec<u8>, i32) {
    let (mantissa, exponent) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut point = whole.len() as i32 + exponent.parse::<i32>().unwrap_or(0);
    let mut digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
    let leading = digits.iter().take_while(|d| **d == b'0').count();
    digits.drain(..leading);
    point -= leading as i32;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        // Zero is written before this is reached; keep the arrangement total.
        digits.push(b'0');
    }
    (digits, point)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &Value) -> String {
        String::from_utf8(canonical_json(value)).unwrap()
    }

    fn double(bits: u64) -> String {
        let mut out = Vec::new();
        write_double(f64::from_bits(bits), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// RFC 8785, appendix B: IEEE 754 doubles and what JCS writes for them.
    #[test]
    fn numbers_are_written_as_ecmascript_writes_them() {
        let cases = [
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for (bits, expected) in cases {
            assert_eq!(double(bits), expected, "bits {bits:#018x}");
        }
    }

    /// RFC 8785, section 3.2.2: the example's input and its canonical form.
    #[test]
    fn the_rfc_example_canonicalizes_as_published() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            text(&value),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    /// RFC 8785, section 3.2.3: members sorted by UTF-16 code units, so an emoji (a
    /// surrogate pair) sorts before U+FB33 although its code point is greater.
    #[test]
    fn keys_sort_by_utf16_code_units() {
        let input = r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#;
        let value: Value = serde_json::from_str(input).unwrap();
        let names: Vec<String> = text(&value)
            .split("\":\"")
            .skip(1)
            .map(|part| part.split('"').next().unwrap().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "Carriage Return",
                "One",
                "Control",
                "Latin Small Letter O With Diaeresis",
                "Euro Sign",
                "Emoji: Grinning Face",
                "Hebrew Letter Dalet With Dagesh"
            ]
        );
    }

    #[test]
    fn integers_read_as_doubles() {
        assert_eq!(
            text(&serde_json::json!([0, -7, 40, 1e21])),
            "[0,-7,40,1e+21]"
        );
        assert_eq!(
            text(&serde_json::json!([u64::MAX, i64::MIN])),
            "[18446744073709552000,-9223372036854776000]"
        );
        assert_eq!(text(&serde_json::json!(-0.0)), "0");
        assert_eq!(text(&serde_json::json!(1.5e-7)), "1.5e-7");
    }

    #[test]
    fn exact_integers_keep_every_digit_and_agree_with_jcs_up_to_two_to_the_53() {
        let exact = |v: Value| String::from_utf8(canonical_with(&v, Integers::Exact)).unwrap();
        let big = 1_u64 << 53;
        assert_eq!(
            exact(serde_json::json!([big + 1, u64::MAX])),
            format!("[{},{}]", big + 1, u64::MAX)
        );
        assert_eq!(exact(serde_json::json!(i64::MIN)), i64::MIN.to_string());
        for n in [0_i64, -7, 40, 1 << 53, -(1 << 53)] {
            assert_eq!(exact(serde_json::json!(n)), text(&serde_json::json!(n)));
        }
        assert_eq!(exact(serde_json::json!(1.5)), "1.5");
    }

    #[test]
    fn control_characters_are_escaped_and_nothing_else() {
        let s = "\u{0}\u{1f}\u{7f}\u{2028}<>&'/é😀";
        assert_eq!(
            text(&Value::String(s.into())),
            "\"\\u0000\\u001f\u{7f}\u{2028}<>&'/é😀\""
        );
    }
}
