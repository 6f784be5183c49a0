import HTTP
import Testing

@Suite struct JSONTextTests {
    private static func compacted(_ text: String) -> String {
        var out: [UInt8] = []
        Array(text.utf8).withUnsafeBytes { JSONText.appendCompacted(json: $0, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func compacting_dropsWhitespaceBetweenTokens() {
        #expect(Self.compacted(#"{"a" : 1, "b" : [true, null, {"c" : "d"}]}"#) == #"{"a":1,"b":[true,null,{"c":"d"}]}"#)
        #expect(Self.compacted("{\n\t\"a\" :\r\n 1 }") == #"{"a":1}"#)
    }

    @Test func compacting_keepsStringsAsTheyAre() {
        #expect(Self.compacted(#"{"a b" : " x , y : ", "q" : "say \"hi , there\" \\", "z" : 1}"#)
                == #"{"a b":" x , y : ","q":"say \"hi , there\" \\","z":1}"#)
        #expect(Self.compacted(#"["\\\" ", " "]"#) == #"["\\\" "," "]"#)
    }
}
