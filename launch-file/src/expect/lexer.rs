//! The lexer: an expectation's text into tokens, each with its character offset.

use super::ExpectError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Int(i128),
    Float(f64),
    Ident(String),
    Op(&'static str),
    End,
}

pub(super) const OPERATORS: [&str; 20] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "(", ")", "[", "]",
    ",", "=",
];

pub(super) fn tokens(text: &str) -> Result<Vec<(Token, usize)>, ExpectError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            let hex = c == '0' && matches!(chars.get(i + 1), Some('x' | 'X'));
            if hex {
                i += 2;
                while i < chars.len() && (chars[i].is_ascii_hexdigit() || chars[i] == '_') {
                    i += 1;
                }
            } else {
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric()
                        || chars[i] == '.'
                        || chars[i] == '_'
                        || ((chars[i] == '-' || chars[i] == '+')
                            && matches!(chars[i - 1], 'e' | 'E')))
                {
                    i += 1;
                }
            }
            let word: String = chars[start..i].iter().filter(|&&c| c != '_').collect();
            let bad = || ExpectError {
                message: format!("`{word}` is not a number"),
                at: start,
                help: "write an integer (42, -7, 0x2a) or a float (2.5, 1e-3)".to_string(),
            };
            let token = if hex {
                Token::Int(i128::from_str_radix(&word[2..], 16).map_err(|_| bad())?)
            } else if word.contains(['.', 'e', 'E']) {
                Token::Float(word.parse().map_err(|_| bad())?)
            } else {
                Token::Int(word.parse().map_err(|_| bad())?)
            };
            out.push((token, start));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), start));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            match OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                Some(&"=") => {
                    return Err(ExpectError {
                        message: "`=` is not a comparison".to_string(),
                        at: i,
                        help: "compare with `==`".to_string(),
                    });
                }
                Some(op) => {
                    out.push((Token::Op(op), i));
                    i += op.chars().count();
                }
                None => {
                    return Err(ExpectError {
                        message: format!("unexpected character `{c}`"),
                        at: i,
                        help: "an expectation uses buffers, numbers, `[ ]`, `( )`, + - * / %, comparisons, && || ! and sum/len/min/max/abs".to_string(),
                    });
                }
            }
        }
    }
    out.push((Token::End, chars.len()));
    Ok(out)
}

pub(super) fn op_static(op: &str) -> &'static str {
    OPERATORS.iter().find(|o| **o == op).copied().unwrap_or("")
}

pub(super) fn describe(t: &Token) -> String {
    match t {
        Token::Int(v) => format!("`{v}`"),
        Token::Float(v) => format!("`{v}`"),
        Token::Ident(n) => format!("`{n}`"),
        Token::Op(o) => format!("`{o}`"),
        Token::End => "the end".to_string(),
    }
}
