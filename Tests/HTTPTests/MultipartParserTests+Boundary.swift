import Testing
@testable import HTTP

extension MultipartParserTests {
    @Suite struct Boundary {
        @Test(arguments: [
            ("multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW", "----WebKitFormBoundary7MA4YWxkTrZu0gW"),
            ("multipart/form-data; boundary=\"quoted boundary\"", "quoted boundary"),
            ("multipart/form-data; boundary=\"=_Part_1:'()+,-./?\"", "=_Part_1:'()+,-./?"),
            ("Multipart/Form-Data; BOUNDARY=abc", "abc"),
            ("multipart/form-data;boundary=abc", "abc"),
            ("multipart/form-data ; charset=utf-8; boundary=\"abc\" ; x=y", "abc"),
            ("multipart/form-data; boundary=abc;", "abc"),
            ("multipart/form-data; boundary=\(String(repeating: "b", count: 70))", String(repeating: "b", count: 70)),
        ])
        func validContentType_yieldsItsBoundary(_ contentType: String, _ boundary: String) {
            #expect(MultipartParser.boundary(fromContentType: contentType) == boundary)
        }

        @Test(arguments: [
            ("missing", "multipart/form-data"),
            ("missing with other parameters", "multipart/form-data; charset=utf-8"),
            ("empty quoted", "multipart/form-data; boundary=\"\""),
            ("empty unquoted", "multipart/form-data; boundary="),
            ("too long", "multipart/form-data; boundary=\(String(repeating: "b", count: 71))"),
            ("trailing space", "multipart/form-data; boundary=\"abc \""),
            ("not a bchar, quoted", "multipart/form-data; boundary=\"a@b\""),
            ("not a bchar, unquoted", "multipart/form-data; boundary=a!b"),
            ("unquoted space", "multipart/form-data; boundary=a b"),
            ("unterminated quote", "multipart/form-data; boundary=\"abc"),
            ("repeated", "multipart/form-data; boundary=a; boundary=b"),
            ("other media type", "multipart/mixed; boundary=abc"),
            ("not multipart", "application/json; boundary=abc"),
            ("empty", ""),
        ])
        func invalidContentType_yieldsNil(_ name: String, _ contentType: String) {
            #expect(MultipartParser.boundary(fromContentType: contentType) == nil, "\(name)")
        }
    }
}
