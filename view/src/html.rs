//! The page: one HTML document with the data as an inline JSON blob, an inline stylesheet and
//! an inline script. Nothing is fetched: no `src` or `href` attribute names another file, so
//! the page opens offline and reaches no network.

use crate::model::PageData;

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// JSON that is safe inside a `<script>` element: `<` appears in JSON only inside strings,
/// where `\u003c` means the same, so no `</script>` or `<!--` in the data can end the element.
fn embeddable_json(data: &PageData) -> String {
    // Serializing plain data structs cannot fail.
    serde_json::to_string(data)
        .unwrap_or_else(|_| "null".to_string())
        .replace('<', "\\u003c")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The whole page.
pub fn page(data: &PageData) -> String {
    let json = embeddable_json(data);
    let title = escape(&format!(
        "cudasem: {} ({})",
        data.meta.kernel, data.meta.ptx_path
    ));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <noscript>This page draws a cudasem run with an inline script: enable JavaScript.</noscript>\n\
         <div id=\"app\"></div>\n\
         <script type=\"application/json\" id=\"data\">{json}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
}
