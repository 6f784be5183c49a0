import Foundation
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

    private static func quoted(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        bytes.withUnsafeBytes { JSONText.appendQuoted(bytes: $0, to: &out) }
        return out
    }

    /// The escape rules one byte at a time, as the word-at-a-time scan must match them.
    private static func referenceQuoted(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for byte in bytes {
            switch byte {
            case 0x22: out += Array(#"\""#.utf8)
            case 0x5C: out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case ..<0x20, 0x7F: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
            default: out.append(byte)
            }
        }
        return out + [0x22]
    }

    @Test func quoting_escapesEachSpecialByte_atEveryPositionOfAWord() {
        let specials: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1F, 0x22, 0x5C, 0x7F]
        for length in 1...24 {
            for position in 0..<length {
                for special in specials {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = special
                    #expect(Self.quoted(bytes) == Self.referenceQuoted(bytes), "length \(length) at \(position): \(special)")
                }
            }
        }
        #expect(Self.quoted([]) == Array(#""""#.utf8))
    }

    /// Bytes next to the special ones (0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7E, 0x80, 0xFF) pass
    /// as they are; random text, UTF-8 included, matches the byte-at-a-time rules.
    @Test func quoting_matchesTheRules_onRandomBytes() {
        var random = SplitMix64(state: 42)
        for _ in 0..<2_000 {
            let length = Int(random.next() % 70)
            let bytes = (0..<length).map { _ -> UInt8 in
                let pick = random.next()
                return pick % 4 == 0 ? [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7E, 0x80, 0xFF, 0x22, 0x5C, 0x1F][Int(pick >> 8 % 11)]
                                     : UInt8(truncatingIfNeeded: pick >> 16)
            }
            #expect(Self.quoted(bytes) == Self.referenceQuoted(bytes))
        }
    }

    /// A long run of appends grows the buffer geometrically (not one exact reallocation per
    /// field): the capacity after many small appends stays within twice the length.
    @Test func quoting_growsTheBufferGeometrically() {
        var out: [UInt8] = []
        var reallocations = 0
        var capacity = out.capacity
        for _ in 0..<2_000 {
            Array("some text".utf8).withUnsafeBytes { JSONText.appendQuoted(bytes: $0, to: &out) }
            if out.capacity != capacity { reallocations += 1; capacity = out.capacity }
        }
        #expect(reallocations < 30, "\(reallocations) reallocations")
    }
}
