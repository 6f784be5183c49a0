import Testing
@testable import PostsServer

/// What is read from S3's XML: a listing's keys and continuation, an error's code and message.
@Suite struct S3ResponseTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aLastPage_hasItsKeysAndNoToken() throws {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>posts</Name><Prefix>up/</Prefix>\
            <KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>\
            <Contents><Key>up/a.jpg</Key><Size>3</Size><ETag>"x"</ETag></Contents>\
            <Contents><Key>up/b.png</Key><Size>4</Size></Contents></ListBucketResult>
            """
        let page = try #require(S3Response.listPage(bytes(body)))
        #expect(page == S3Response.ListPage(keys: ["up/a.jpg", "up/b.png"], nextToken: nil))
    }

    @Test func aTruncatedPage_hasTheNextToken() throws {
        let body = """
            <ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>1Ab+c/D==</NextContinuationToken>\
            <Contents><Key>a.jpg</Key></Contents></ListBucketResult>
            """
        #expect(S3Response.listPage(bytes(body)) == S3Response.ListPage(keys: ["a.jpg"], nextToken: "1Ab+c/D=="))
        // Truncated, and no way on: not a page to trust.
        #expect(S3Response.listPage(bytes("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>")) == nil)
        // A token of a last page is no reason to ask again.
        let last = "<ListBucketResult><IsTruncated>false</IsTruncated><NextContinuationToken>t</NextContinuationToken></ListBucketResult>"
        #expect(S3Response.listPage(bytes(last))?.nextToken == nil)
    }

    @Test func anEmptyListing_hasNoKeys() {
        let body = "<ListBucketResult><Name>posts</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>"
        #expect(S3Response.listPage(bytes(body)) == S3Response.ListPage(keys: [], nextToken: nil))
    }

    @Test func keys_areDecoded() {
        let body = "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a &amp; b&lt;c&gt;&#233;&quot;.jpg</Key></Contents>"
            + "<Contents><Key><![CDATA[x&y.jpg]]></Key></Contents></ListBucketResult>"
        #expect(S3Response.listPage(bytes(body))?.keys == ["a & b<c>é\".jpg", "x&y.jpg"])
    }

    @Test func whatIsNoListing_isNil() {
        for body in ["", "not xml", "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>",
                     "<ListBucketResult><Contents><Key>a.jpg</Key></Contents></ListBucketResult>"] {
            #expect(S3Response.listPage(bytes(body)) == nil, "\(body)")
        }
    }

    /// A body cut short (or otherwise broken) is no listing, even when what came before
    /// the fault looked like one: its keys would be a part taken for the whole.
    @Test func malformedXML_isNil_evenPartWayThroughAListing() {
        let cut = "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a.jpg</Key></Contents><Contents><Ke"
        #expect(S3Response.listPage(bytes(cut)) == nil)
        let broken = "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a.jpg</Key></Contents></Wrong>"
        #expect(S3Response.listPage(bytes(broken)) == nil)
        let badEntity = "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a &nope; b</Key></Contents></ListBucketResult>"
        #expect(S3Response.listPage(bytes(badEntity)) == nil)
    }

    @Test func anErrorBody_isCodeAndMessage() {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message>\
            <RequestId>4442587FB7D0A2F9</RequestId></Error>
            """
        #expect(S3Response.errorSummary(bytes(body)) == "SignatureDoesNotMatch: The request signature we calculated does not match")
        #expect(S3Response.errorSummary(bytes("<Error><Code>NoSuchBucket</Code></Error>")) == "NoSuchBucket")
        #expect(S3Response.errorSummary(bytes("<Error><Code>A&amp;B</Code><Message>x &lt; y</Message></Error>")) == "A&B: x < y")
    }

    @Test func whatIsNoError_hasNoSummary() {
        for body in ["", "Internal Server Error", "<html><body>502 Bad Gateway</body></html>",
                     "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", "<Error><Code>Slow"] {
            #expect(S3Response.errorSummary(bytes(body)) == nil, "\(body)")
        }
    }
}
