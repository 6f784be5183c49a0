import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What S3's XML answers say that we read: a listing's keys and continuation
/// (ListObjectsV2), and an error's `Code` and `Message`. Read with Foundation's XML parser
/// (libxml2), from a body of at most `S3Client.maxXMLBytes`.
struct S3Response {
    /// The text of each element named in `wanted`, in document order, wherever it sits; nil
    /// for a body that is not well-formed XML. What came before a fault is no answer: a
    /// listing cut short names part of a page (its `IsTruncated` and token come first) and
    /// would be taken for the whole.
    static func elements(_ wanted: Set<String>, in body: [UInt8]) -> [(name: String, text: String)]? {
        let collector = Collector(wanted: wanted)
        let parser = XMLParser(data: Data(body))
        parser.delegate = collector
        // Foundation's parser on Linux takes a body that ends inside an element for a whole
        // document: the root must have been closed too.
        guard parser.parse(), collector.rootClosed else { return nil }
        return collector.found
    }

    struct ListPage: Equatable {
        let keys: [String]
        let nextToken: String?
    }

    static func listPage(_ body: [UInt8]) -> ListPage? {
        // Every listing says whether it is truncated; an error body does not.
        guard let found = elements(["Key", "IsTruncated", "NextContinuationToken"], in: body),
              found.contains(where: { $0.name == "IsTruncated" }) else { return nil }
        let truncated = found.first { $0.name == "IsTruncated" }?.text == "true"
        let token = found.first { $0.name == "NextContinuationToken" }?.text
        if truncated && token == nil { return nil }
        return ListPage(keys: found.filter { $0.name == "Key" }.map(\.text), nextToken: truncated ? token : nil)
    }

    /// `Code: Message` of an error body, or nil when it is not one.
    static func errorSummary(_ body: [UInt8]) -> String? {
        guard let found = elements(["Code", "Message"], in: body), let code = found.first(where: { $0.name == "Code" })?.text else { return nil }
        let message = found.first { $0.name == "Message" }?.text
        return message.map { "\(code): \($0)" } ?? code
    }

    private final class Collector: NSObject, XMLParserDelegate {
        let wanted: Set<String>
        var found: [(name: String, text: String)] = []
        private var text: String?
        private var depth = 0
        /// Whether the document's element ended (and so the document).
        private(set) var rootClosed = false

        init(wanted: Set<String>) {
            self.wanted = wanted
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            depth += 1
            text = wanted.contains(name) ? "" : nil
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text? += string
        }

        /// `<![CDATA[…]]>` is text too.
        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            text? += String(decoding: block, as: UTF8.self)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if let collected = text, wanted.contains(name) { found.append((name, collected)) }
            text = nil
            depth -= 1
            if depth == 0 { rootClosed = true }
        }
    }
}
