import Foundation

/// The HTML of our Notes and the plain text of others' (API.md: "`content` is HTML of
/// title, summary and body (escaped)"; a remote reply's "HTML as plain text"). Pure.
enum NoteContent {
    /// `&`, `<`, `>`, `"` and `'` escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// Paragraphs of escaped text, line breaks kept; an empty part makes none.
    static func html(paragraphs: [String]) -> String {
        paragraphs.filter { !$0.isEmpty }.map { part in
            "<p>" + escape(part).replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "<br>") + "</p>"
        }.joined()
    }

    /// A remote Note's HTML as the text a person reads: `<br>` and the end of a paragraph
    /// become line breaks, every other tag goes, entities are decoded. Bounded by `limit`
    /// characters of output.
    static func plainText(fromHTML html: String, limit: Int = 20_000) -> String {
        var out = ""
        var index = html.startIndex
        while index < html.endIndex, out.count < limit {
            let character = html[index]
            if character == "<" {
                guard let close = html[index...].firstIndex(of: ">") else { break }
                let tag = html[html.index(after: index)..<close].lowercased()
                let name = tag.split(whereSeparator: { $0 == " " || $0 == "/" }).first.map(String.init) ?? ""
                if name == "br" || (tag.hasPrefix("/") && tag.dropFirst().hasPrefix("p")) {
                    out += "\n"
                }
                index = html.index(after: close)
            } else if character == "&" {
                let end = html[index...].prefix(12).firstIndex(of: ";")
                if let end, let decoded = entity(String(html[html.index(after: index)..<end])) {
                    out.append(decoded)
                    index = html.index(after: end)
                } else {
                    out.append("&")
                    index = html.index(after: index)
                }
            } else {
                out.append(character)
                index = html.index(after: index)
            }
        }
        while out.hasSuffix("\n") { out.removeLast() }
        return String(out.prefix(limit))
    }

    private static func entity(_ name: String) -> Character? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos", "#39": return "'"
        case "nbsp": return " "
        default:
            let number: UInt32? = name.hasPrefix("#x") || name.hasPrefix("#X") ? UInt32(name.dropFirst(2), radix: 16)
                : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
            return number.flatMap(Unicode.Scalar.init).map(Character.init)
        }
    }

    /// The media type of a stored image, by its name's extension.
    static func mediaType(ofImage url: String) -> String {
        switch url.split(separator: ".").last?.lowercased() {
        case "png": "image/png"
        case "webp": "image/webp"
        case "gif": "image/gif"
        case "heic": "image/heic"
        case "avif": "image/avif"
        default: "image/jpeg"
        }
    }
}
