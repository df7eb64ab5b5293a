// Escaping for the two places report text enters the HTML page: markup and
// the embedded JSON data block. Every string that comes from the report
// (symbols, paths, thread names, notes) goes through one of these.

enum HTMLText {
    /// `text` safe as element content and as a quoted attribute value.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// JSON text made safe inside `<script type="application/json">`.
    ///
    /// A script element ends at the first `</script`, whatever JSON string it sits
    /// in, and `<!--` switches the parser into a mode where a later `<script`
    /// changes where it ends. Outside strings, JSON never contains `<`, `>` or
    /// `&`, so writing each of them as a `\u00XX` escape keeps the JSON value
    /// identical while leaving no markup for the HTML parser to find.
    static func scriptSafeJSON(_ json: String) -> String {
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
