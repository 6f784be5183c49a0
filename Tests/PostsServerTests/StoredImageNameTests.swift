import Images
import Testing
@testable import PostsServer

/// The names the server gives stored images are the only names it ever serves or removes:
/// anything a URL could smuggle in (`..`, slashes, other files of the folder) is no name.
@Suite struct StoredImageNameTests {
    private static let hex = "0123456789abcdef0123456789abcdef"

    @Test func anOriginal_isThirtyTwoLowercaseHexDigitsAndAStoredExtension() throws {
        for (ext, format) in [("jpg", ImageFormat.jpeg), ("png", .png), ("gif", .gif), ("webp", .webp)] {
            let name = try #require(StoredImageName("\(Self.hex).\(ext)"), "\(ext)")
            #expect(name.base == Self.hex && name.format == format)
            #expect(name.name == "\(Self.hex).\(ext)" && name.url == "/uploads/\(Self.hex).\(ext)")
        }
    }

    @Test func otherNames_areNotStoredImages() {
        let others = [
            "",
            ".jpg",
            Self.hex,                                        // no extension
            "\(Self.hex).",                                  // an empty one
            "\(Self.hex).jpeg",                              // not the extension the server writes
            "\(Self.hex).heic",                              // HEIC is stored as JPEG: never an original
            "\(Self.hex).JPG",
            "\(Self.hex.uppercased()).jpg",                  // the server writes lowercase only
            "\(Self.hex.dropLast()).jpg",                    // 31 digits
            "\(Self.hex)0.jpg",                              // 33
            "0123456789abcdef0123456789abcdeg.jpg",          // not hex
            "\(Self.hex).jpg.png",
            "../\(Self.hex).jpg",
            "..",
            "\(Self.hex.prefix(30))/..jpg",
            "\(Self.hex.prefix(31))/.jpg",                   // a slash in the digits' place
            "/etc/passwd",
            "\(Self.hex)-w320.jpg",                          // a size is asked for with ?width=
            ".upload-\(Self.hex).made.part",
        ]
        for name in others { #expect(StoredImageName(name) == nil, "\(name)") }
    }

    @Test func aURL_givesItsNameOnlyUnderUploads() {
        #expect(StoredImageName(url: "/uploads/\(Self.hex).png")?.format == .png)
        for url in [nil, "", "/uploads/", "uploads/\(Self.hex).png", "/files/\(Self.hex).png", "https://cdn.example/\(Self.hex).png",
                    "/uploads/../\(Self.hex).png", "/uploads/x/\(Self.hex).png", "/uploads//\(Self.hex).png"] {
            #expect(StoredImageName(url: url) == nil, "\(url ?? "nil")")
        }
    }

    @Test func sizes_areNamedBesideTheOriginal_GIFsAsPNG() throws {
        let jpeg = try #require(StoredImageName("\(Self.hex).jpg"))
        #expect(jpeg.sizeName(width: 320) == "\(Self.hex)-w320.jpg")
        let gif = try #require(StoredImageName("\(Self.hex).gif"))
        #expect(gif.sizeName(width: 160) == "\(Self.hex)-w160.png")
        let webp = try #require(StoredImageName("\(Self.hex).webp"))
        #expect(webp.sizeName(width: 1600) == "\(Self.hex)-w1600.webp")
        // What a removal unlinks: the original and each of the five sizes.
        #expect(gif.allNames == ["\(Self.hex).gif"] + [160, 320, 640, 1080, 1600].map { "\(Self.hex)-w\($0).png" })
    }

    @Test func isSizeName_acceptsOnlyAHexBaseAWidthAndAnExtension() {
        for name in ["\(Self.hex)-w320.jpg", "\(Self.hex)-w160.png", "\(Self.hex)-w1600.webp", "\(Self.hex)-w7.gif"] {
            #expect(StoredImageName.isSizeName(name), "\(name)")
        }
        for name in ["\(Self.hex).jpg", "\(Self.hex)-w.jpg", "\(Self.hex)-320.jpg", "\(Self.hex)-w32a.jpg", "\(Self.hex)-w320.txt",
                     "\(Self.hex.uppercased())-w320.jpg", "\(Self.hex)-w320-w320.jpg", "../\(Self.hex)-w320.jpg",
                     "\(Self.hex)-w320.jpg/..", "\(Self.hex)-w\u{0663}.jpg", "notes-w320.jpg", "-w320.jpg"] {
            #expect(!StoredImageName.isSizeName(name), "\(name)")
        }
    }

    /// What `storage copy` labels a copy with: an original's format, a size's still format;
    /// nothing for a name the server never writes (a GIF or HEIC size, an original's HEIC).
    @Test func storedFormat_isTheFormatOfTheServersFilesOnly() {
        let formats: [(String, ImageFormat?)] = [
            ("\(Self.hex).jpg", .jpeg), ("\(Self.hex).gif", .gif), ("\(Self.hex).webp", .webp), ("\(Self.hex).png", .png),
            ("\(Self.hex)-w320.jpg", .jpeg), ("\(Self.hex)-w640.png", .png), ("\(Self.hex)-w1600.webp", .webp),
            ("\(Self.hex)-w320.gif", nil), ("\(Self.hex)-w320.heic", nil), ("\(Self.hex).heic", nil), ("notes.txt", nil),
            ("\(Self.hex)-w320.txt", nil), ("\(Self.hex).jpeg", nil),
        ]
        for (name, format) in formats {
            #expect(StoredImageName.storedFormat(of: name) == format, "\(name)")
        }
    }

    @Test func randomNames_areValidAndDistinct() throws {
        let names = (0..<200).map { _ in StoredImageName.random(.webp) }
        for name in names {
            let parsed = try #require(StoredImageName(name.name))
            #expect(parsed == name && name.base.count == 32)
        }
        #expect(Set(names.map(\.base)).count == names.count)
    }
}
