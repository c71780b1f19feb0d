use super::*;

fn bytes_s32(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `text` checked against `buffers` (name, element type, bytes); it must parse and bind.
fn check(text: &str, buffers: &[(&str, Elem, Vec<u8>)]) -> Result<(), Violation> {
    let launch: Vec<(&str, Elem, u64)> = buffers
        .iter()
        .map(|(n, e, b)| (*n, *e, (b.len() / e.size()) as u64))
        .collect();
    let e = Expectation::parse(text).unwrap_or_else(|e| panic!("{text}: {}", e.message));
    let bound = e
        .bind(&launch)
        .unwrap_or_else(|e| panic!("{text}: {}", e.message));
    let data: Vec<&[u8]> = bound
        .buffers
        .iter()
        .map(|(i, _, _)| buffers[*i].2.as_slice())
        .collect();
    bound.check(&data)
}

/// The violation of `text` against `buffers`, as the user reads it.
fn violation(text: &str, buffers: &[(&str, Elem, Vec<u8>)]) -> String {
    check(text, buffers)
        .expect_err("the expectation is violated")
        .to_string()
}

#[test]
fn buffer_equal_to_values() {
    let out = ("out", Elem::S32, bytes_s32(&[1, 2, 3]));
    assert_eq!(
        check("out == [1, 2, 3]", std::slice::from_ref(&out)),
        Ok(())
    );
    assert_eq!(
        violation("out == [1, 5, 3]", std::slice::from_ref(&out)),
        "`out == [1, 5, 3]` fails: out[1] = 2 (expected 5)"
    );
    assert_eq!(
        violation("out == [1, 2]", std::slice::from_ref(&out)),
        "`out == [1, 2]` fails: len(out) = 3, len([...]) = 2"
    );
    assert_eq!(check("out != [1, 2, 4]", &[out]), Ok(()));
}

#[test]
fn every_index_must_satisfy() {
    let out = ("out", Elem::S32, bytes_s32(&[0, 2, 4, 5]));
    let a = ("a", Elem::S32, bytes_s32(&[0, 1, 2, 3]));
    assert_eq!(
        violation("out[i] == 2*a[i]", &[out.clone(), a.clone()]),
        "`out[i] == 2*a[i]` fails at i = 3: out[3] = 5, a[3] = 3"
    );
    assert_eq!(
        check(
            "out[i] >= a[i] && out[i] % 1 == 0",
            &[out.clone(), a.clone()]
        ),
        Ok(())
    );
    assert_eq!(
        check(
            "sum(out) == 11 && len(a) == 4 && max(a) == 3 && min(out) == 0",
            &[out.clone(), a]
        ),
        Ok(())
    );
    assert_eq!(
        violation("sum(out) == 12", std::slice::from_ref(&out)),
        "`sum(out) == 12` fails: sum(out) = 11"
    );
    let e = violation("out[i + 1] >= out[i]", &[out]);
    assert!(
        e.contains("at i = 3: out[4] is out of range (out has 4 elements)"),
        "{e}"
    );
}

#[test]
fn floats_take_the_buffers_precision() {
    let out = ("out", Elem::F32, bytes_f32(&[0.1, 2.5]));
    assert_eq!(
        check(
            "out[0] == 0.1 && out == [0.1, 2.5]",
            std::slice::from_ref(&out)
        ),
        Ok(())
    );
    assert!(check("out[0] == 0.2", std::slice::from_ref(&out)).is_err());
    assert_eq!(check("abs(sum(out) - 2.6) < 1e-6", &[out]), Ok(()));
}

#[test]
fn unsigned_elements_read_unsigned() {
    let out = ("out", Elem::U32, bytes_s32(&[-1]));
    assert_eq!(check("out[0] == 4294967295 && out[0] > 0", &[out]), Ok(()));
}

#[test]
fn syntax_errors_say_where() {
    let e = Expectation::parse("sum(out) = 8").unwrap_err();
    assert_eq!((e.at, e.message.as_str()), (9, "`=` is not a comparison"));
    let e = Expectation::parse("out[i == 2").unwrap_err();
    assert_eq!(
        (e.at, e.message.as_str()),
        (6, "expected `]` to close the index, found `==`")
    );
    let e = Expectation::parse("1 < x < 3").unwrap_err();
    assert_eq!(e.at, 6);
    let e = Expectation::parse("frob(out) == 1").unwrap_err();
    assert_eq!((e.at, e.message.as_str()), (0, "unknown function `frob`"));
    assert_eq!(
        Expectation::parse("").unwrap_err().message,
        "the expectation is empty"
    );
}

#[test]
fn binding_errors_say_where() {
    let launch = [("out", Elem::S32, 4), ("a", Elem::S32, 8)];
    let bind = |t: &str| Expectation::parse(t).unwrap().bind(&launch).map(|_| ());
    assert_eq!(bind("x[0] == 1").unwrap_err().message, "unknown buffer `x`");
    assert_eq!(
        bind("k == 1").unwrap_err().message,
        "`k` is neither a buffer nor an index"
    );
    assert_eq!(
        bind("sum(out)").unwrap_err().message,
        "the expectation is a number, not a condition"
    );
    assert!(
        bind("out[i] == a[i]")
            .unwrap_err()
            .message
            .contains("different lengths")
    );
    assert!(bind("out + 1 == 2").is_err());
    assert!(bind("out == 3").is_err());
    assert_eq!(bind("out[i] == a[2*i]"), Ok(()));
}

/// Each evaluation error reads as it did when the errors were strings.
#[test]
fn evaluation_errors_name_what_stopped() {
    let out = ("out", Elem::S32, bytes_s32(&[0, 2]));
    let cases = [
        ("out[1] / out[0] == 1", "2 / 0: division by zero"),
        ("out[1] % out[0] == 1", "2 % 0: division by zero"),
        (
            "out[1] * 0x7fffffffffffffffffffffffffffffff == 1",
            "2 * 170141183460469231731687303715884105727 overflows",
        ),
        ("out[5] == 1", "out[5] is out of range (out has 2 elements)"),
        ("out[0.5] == 1", "index 0.5 is not an integer"),
    ];
    for (text, want) in cases {
        let e = violation(text, std::slice::from_ref(&out));
        assert!(e.contains(want), "{text}: {e}");
    }
}
