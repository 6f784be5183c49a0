import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What S3's XML answers say that we read: a listing's keys and continuation
/// (ListObjectsV2), and an error's `Code` and `Message`. Read with Foundation's XML parser
/// (libxml2), from a body of at most `S3Client.maxXMLBytes`.
struct S3Response {
    /// The text of each element named in `wanted`, in document order, wherever it sits.
    static func elements(_ wanted: Set<String>, in body: [UInt8]) -> [(name: String, text: String)] {
        let collector = Collector(wanted: wanted)
        let parser = XMLParser(data: Data(body))
        parser.delegate = collector
        // A malformed body ends with what was read before the fault; callers check.
        _ = parser.parse()
        return collector.found
    }

    struct ListPage: Equatable {
        let keys: [String]
        let nextToken: String?
    }

    static func listPage(_ body: [UInt8]) -> ListPage? {
        let found = elements(["Key", "IsTruncated", "NextContinuationToken", "ListBucketResult"], in: body)
        // A ListBucketResult's element starts the document; anything else is not a listing.
        guard found.contains(where: { $0.name == "IsTruncated" }) else { return nil }
        let truncated = found.first { $0.name == "IsTruncated" }?.text == "true"
        let token = found.first { $0.name == "NextContinuationToken" }?.text
        if truncated && token == nil { return nil }
        return ListPage(keys: found.filter { $0.name == "Key" }.map(\.text), nextToken: truncated ? token : nil)
    }

    /// `Code: Message` of an error body, or nil when it is not one.
    static func errorSummary(_ body: [UInt8]) -> String? {
        let found = elements(["Code", "Message"], in: body)
        guard let code = found.first(where: { $0.name == "Code" })?.text else { return nil }
        let message = found.first { $0.name == "Message" }?.text
        return message.map { "\(code): \($0)" } ?? code
    }

    private final class Collector: NSObject, XMLParserDelegate {
        let wanted: Set<String>
        var found: [(name: String, text: String)] = []
        private var text: String?

        init(wanted: Set<String>) {
            self.wanted = wanted
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            text = wanted.contains(name) ? "" : nil
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text? += string
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if let collected = text, wanted.contains(name) { found.append((name, collected)) }
            text = nil
        }
    }
}
