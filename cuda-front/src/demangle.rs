//! C++ names as a person reads them: a kernel written in CUDA C++ without `extern "C"` has a
//! mangled PTX name (`_Z6reducePKfPfi`, Itanium C++ ABI), which reports show demangled
//! (`reduce(float const*, float*, int)`) while JSON keeps the PTX name.

use cpp_demangle::{DemangleOptions, Symbol};

/// The demangled name with its parameter types (`reduce(float const*, float*, int)`), or the
/// name itself when it is not a mangled C++ name (`vecadd`, a PTX label).
pub fn demangle(name: &str) -> String {
    demangle_with(name, DemangleOptions::default()).unwrap_or_else(|| name.to_string())
}

/// The demangled name without parameters (`reduce`, `ns::scale<float>`), or the name itself:
/// what a user types to name a kernel.
pub fn short_name(name: &str) -> String {
    demangle_with(
        name,
        DemangleOptions::default().no_params().no_return_type(),
    )
    .unwrap_or_else(|| name.to_string())
}

/// `demangle(name)`, followed by the PTX name in brackets when they differ: for text that must
/// let a user find the PTX name too (`reduce(float const*, float*, int) [_Z6reducePKfPfi]`).
pub fn with_ptx_name(name: &str) -> String {
    let readable = demangle(name);
    if readable == name {
        readable
    } else {
        format!("{readable} [{name}]")
    }
}

/// The C++ parameter types of a mangled function name, as demangled text (`["float const*",
/// "float*", "int"]`); `None` when the name is not a mangled function.
pub fn parameter_types(name: &str) -> Option<Vec<String>> {
    let full = demangle_with(name, DemangleOptions::default())?;
    let short = demangle_with(
        name,
        DemangleOptions::default().no_params().no_return_type(),
    )?;
    // A template function's demangled name starts with its return type (`void scale<float>(...)`).
    let rest = &full[full.find(short.as_str())? + short.len()..];
    let inner = rest.trim_end().strip_prefix('(')?;
    let inner = &inner[..inner.rfind(')')?];
    Some(split_top_level(inner))
}

/// Splits a parameter list at the commas outside brackets (`a<b, c>, d` is two items).
pub fn split_top_level(list: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() || !items.is_empty() {
        items.push(current.trim().to_string());
    }
    // `f(void)` and `f()` take nothing.
    if items.len() == 1 && (items[0].is_empty() || items[0] == "void") {
        items.clear();
    }
    items
}

fn demangle_with(name: &str, options: DemangleOptions) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    Symbol::new(name).ok()?.demangle(&options).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_and_plain_names() {
        assert_eq!(
            demangle("_Z6reducePKfPfi"),
            "reduce(float const*, float*, int)"
        );
        assert_eq!(short_name("_Z6reducePKfPfi"), "reduce");
        assert_eq!(demangle("vecadd"), "vecadd");
        assert_eq!(short_name("vecadd"), "vecadd");
        assert_eq!(demangle("_Znot_mangled"), "_Znot_mangled");
        assert_eq!(
            with_ptx_name("_Z6reducePKfPfi"),
            "reduce(float const*, float*, int) [_Z6reducePKfPfi]"
        );
        assert_eq!(with_ptx_name("vecadd"), "vecadd");
    }

    #[test]
    fn parameter_types_of_kernels() {
        assert_eq!(
            parameter_types("_Z6reducePKfPfi").unwrap(),
            vec!["float const*", "float*", "int"]
        );
        assert_eq!(parameter_types("_Z4initv").unwrap(), Vec::<String>::new());
        // A template kernel: `void scale<float>(float*, float, int)`.
        assert_eq!(
            parameter_types("_Z5scaleIfEvPT_S0_i").unwrap(),
            vec!["float*", "float", "int"]
        );
        assert_eq!(parameter_types("vecadd"), None);
    }
}
