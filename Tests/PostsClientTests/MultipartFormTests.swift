import Foundation
import PostsClient
import Testing

@Suite struct MultipartFormTests {
    @Test func fieldsThenFiles_inRFC7578Framing() {
        var form = MultipartForm(boundary: "XyZ")
        form.append("Hello", named: "title")
        form.append("two\r\nlines", named: "body")
        form.append(Data([0xFF, 0xD8, 0x00]), named: "image", filename: "image.jpg", contentType: "image/jpeg")
        #expect(form.contentType == "multipart/form-data; boundary=XyZ")
        let expected = Data("""
            --XyZ\r
            Content-Disposition: form-data; name="title"\r
            \r
            Hello\r
            --XyZ\r
            Content-Disposition: form-data; name="body"\r
            \r
            two\r
            lines\r
            --XyZ\r
            Content-Disposition: form-data; name="image"; filename="image.jpg"\r
            Content-Type: image/jpeg\r
            \r

            """.utf8) + Data([0xFF, 0xD8, 0x00]) + Data("\r\n--XyZ--\r\n".utf8)
        #expect(form.body == expected)
    }

    @Test func quotesAndLineBreaksInNames_arePercentEncoded() {
        var form = MultipartForm(boundary: "b")
        form.append(Data(), named: "f", filename: "a\"b\r\n.png", contentType: "image/png")
        let text = String(decoding: form.body, as: UTF8.self)
        #expect(text.contains(#"filename="a%22b%0D%0A.png""#))
    }

    @Test func eachFormHasItsOwnBoundary() {
        #expect(MultipartForm().boundary != MultipartForm().boundary)
    }
}
