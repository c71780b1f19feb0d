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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;
    use std::collections::BTreeMap;

    fn data_with_source(line: &str) -> PageData {
        PageData {
            meta: Meta {
                kernel: "k<b>".to_string(),
                ptx_path: "a.ptx".to_string(),
                setup: String::new(),
                warp_size: 32,
                cached: false,
                its: false,
                policy: None,
                total_steps: 0,
                from: 0,
                termination: None,
                notes: Vec::new(),
            },
            source: Source {
                ptx: vec![line.to_string()],
                pc_line: Vec::new(),
                pc_cu: Vec::new(),
                pc_listing: Vec::new(),
                cu: Vec::new(),
            },
            rules: BTreeMap::new(),
            warps: Vec::new(),
            grids: Vec::new(),
            start: Snapshot::default(),
            steps: Vec::new(),
            overview: Overview {
                size: 1,
                buckets: Vec::new(),
            },
            lasso: None,
        }
    }

    #[test]
    fn source_text_cannot_end_the_data_element() {
        let line = "// </script><script>alert(1)</script> <!-- x";
        let page = page(&data_with_source(line));
        // The page's own two script elements, and no other.
        assert_eq!(page.matches("</script>").count(), 2);
        assert!(!page.contains("<!-- x"));
        // The data still reads back as the same text.
        let start = page.find(r#"id="data">"#).unwrap() + r#"id="data">"#.len();
        let end = start + page[start..].find("</script>").unwrap();
        let v: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(v["source"]["ptx"][0], line);
        // The title is escaped.
        assert!(page.contains("<title>cudasem: k&lt;b&gt; (a.ptx)</title>"));
    }

    #[test]
    fn the_page_names_no_other_resource() {
        let page = page(&data_with_source("x"));
        for needle in ["http:", "https:", " src=", " href=", "url(", "@import"] {
            assert!(!page.contains(needle), "{needle}");
        }
        assert!(page.contains("default-src 'none'"));
    }
}
