import Foundation
import PostsServer
import Testing
import TestSupport

/// `PUT` and `DELETE /api/profiles/me/avatar` (API.md "Images for phones"): a square cut
/// from the centre, at most 512 px, clean like every upload; the old file goes once no
/// profile and no post names it.
@Suite struct AvatarTests {
    private static func avatarURL(_ response: RawHTTPClient.Response) throws -> String {
        try #require(response.status == 200, "\(response.status) \(response.text)")
        #expect(response.json["status"] as? String == "success")
        let profile = try #require(response.json["profile"] as? [String: Any])
        return try #require(profile["avatar_url"] as? String)
    }

    @Test func put_makesASquareOfAtMost512_servedAtAvatarURL() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let url = try Self.avatarURL(try ash.putAvatar(try ImageFixture.wideJPEG.bytes))
        #expect(url.firstMatch(of: /^\/uploads\/[0-9a-f]{32}\.jpg$/) != nil, "\(url)")
        let served = try APIClient(port: app.server.port).get(url)
        #expect(served.status == 200 && served.header("Content-Type") == "image/jpeg")
        let report = try ImageProbe.inspect(bytes: served.body, at: [(0.1, 0.5), (0.9, 0.5)])
        #expect(report.format == "JPEG" && report.width == 512 && report.height == 512, "\(report)")
        // Cut at the centre of a red-left, blue-right picture: both halves are in it.
        #expect(report.colours.first?.first ?? 0 > 180 && report.colours.last?.last ?? 0 > 180, "\(report.colours)")
        // Everyone reads it on the profile.
        let me = try ash.get("/api/me").json["user"] as? [String: Any]
        let userID = try #require(me?["id"] as? Int)
        let profile = try APIClient(port: app.server.port).get("/api/profiles/\(userID)").json["profile"] as? [String: Any]
        #expect(profile?["avatar_url"] as? String == url)
    }

    @Test func smallerAvatars_staySmaller_andAreClean() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let small = try ImageProbe.inspect(bytes: ash.get(try Self.avatarURL(try ash.putAvatar(try ImageFixture.smallJPEG.bytes))).body)
        #expect(small.width == 200 && small.height == 200, "\(small)")
        // A rotated phone photo: 400×600 upright, so a 400 square; no EXIF left.
        let photo = try ash.get(try Self.avatarURL(try ash.putAvatar(try ImageFixture.gpsRotated.bytes))).body
        let report = try ImageProbe.inspect(bytes: photo)
        #expect(report.width == 400 && report.height == 400, "\(report)")
        #expect(ImageProbe.privateTags(try ImageProbe.exiftool(bytes: photo)).isEmpty)
        #expect(Data(photo).range(of: Data("SERIAL-0042".utf8)) == nil)
    }

    @Test func aGIFAvatar_isAPNGStill() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let url = try Self.avatarURL(try ash.putAvatar(try ImageFixture.animatedGIF.bytes))
        #expect(url.hasSuffix(".png"), "\(url)")
        let served = try ash.get(url)
        #expect(served.header("Content-Type") == "image/png")
        let report = try ImageProbe.inspect(bytes: served.body)
        #expect(report.format == "PNG" && report.frames == 1 && report.width == 80 && report.height == 80, "\(report)")
    }

    @Test func replacingAnAvatar_removesTheOldFile() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let first = try Self.avatarURL(try ash.putAvatar(try ImageFixture.smallJPEG.bytes))
        let second = try Self.avatarURL(try ash.putAvatar(try ImageFixture.stillWebP.bytes))
        #expect(second != first && second.hasSuffix(".webp"))
        #expect(UploadFolder.waitUntil(app, holds: [uploadName(second)]) == [uploadName(second)])
        #expect(try ash.get(first).status == 404 && ash.get(second).status == 200)
    }

    @Test func delete_clearsTheAvatar_andRemovesItsFile() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let url = try Self.avatarURL(try ash.putAvatar(try ImageFixture.widePNG.bytes))
        let cleared = try ash.send("DELETE", "/api/profiles/me/avatar")
        #expect(cleared.status == 200 && (cleared.json["profile"] as? [String: Any])?["avatar_url"] is NSNull, "\(cleared.text)")
        #expect(UploadFolder.waitUntil(app, holds: []) == [])
        #expect(try ash.get(url).status == 404)
        // Clearing again is no error.
        #expect(try ash.send("DELETE", "/api/profiles/me/avatar").status == 200)
    }

    /// PATCH /api/profiles/me may point avatar_url anywhere, including at another user's
    /// file: that file stays while anyone still names it.
    @Test func anAvatarStillNamedByAnotherProfile_isKept() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let url = try Self.avatarURL(try ash.putAvatar(try ImageFixture.smallJPEG.bytes))
        #expect(try blair.send("PATCH", "/api/profiles/me", json: ["avatar_url": url]).status == 200)
        #expect(try ash.send("DELETE", "/api/profiles/me/avatar").status == 200)
        #expect(UploadFolder.contains(app, uploadName(url)))
        #expect(try ash.get(url).status == 200)
        // Once the last one lets go, it goes.
        #expect(try blair.send("PATCH", "/api/profiles/me", json: ["avatar_url": nil]).status == 200)
        #expect(UploadFolder.waitUntil(app, holds: []) == [])
    }

    /// A PATCH that sets avatar_url to some other URL lets go of the uploaded one.
    @Test func patchingAvatarURL_releasesTheUploadedFile() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        _ = try Self.avatarURL(try ash.putAvatar(try ImageFixture.smallJPEG.bytes))
        let patched = try ash.send("PATCH", "/api/profiles/me", json: ["avatar_url": "https://cdn.example/ash.png"])
        #expect((patched.json["profile"] as? [String: Any])?["avatar_url"] as? String == "https://cdn.example/ash.png")
        #expect(UploadFolder.waitUntil(app, holds: []) == [])
        // A PATCH of other fields keeps an uploaded avatar.
        let again = try Self.avatarURL(try ash.putAvatar(try ImageFixture.smallJPEG.bytes))
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "hello"]).status == 200)
        #expect(UploadFolder.contains(app, uploadName(again)))
    }

    /// Each on a new connection: a refusal made before the body is read closes its own.
    @Test func refusals_401_415_422_leaveNoFile() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        func ash() throws -> APIClient { try APIClient.user("ash@example.com", on: app) }
        let image = try ImageFixture.smallJPEG.bytes
        let unauthorized = try APIClient(port: app.server.port).putAvatar(image)
        #expect(unauthorized.status == 401 && unauthorized.json["error"] as? String == "unauthorized")
        #expect(try APIClient(port: app.server.port).send("DELETE", "/api/profiles/me/avatar").status == 401)
        for bytes in [Array("just some text, not an image".utf8)] + (try ImageUploadTests.damaged.map { try $0.bytes }) {
            let response = try ash().putAvatar(bytes)
            #expect(response.status == 415 && response.json["error"] as? String == "unsupported_media_type", "\(response.text)")
        }
        let bomb = try ash().putAvatar(try ImageFixture.bomb.bytes)
        #expect(bomb.status == 422 && bomb.json["error"] as? String == "validation_failed", "\(bomb.text)")
        let noImage = try ash().putAvatar(image, part: "picture")
        #expect(noImage.status == 422, "\(noImage.text)")
        #expect(UploadFolder.waitUntil(app, holds: []) == [])
        let profile = try ash().get("/api/me").json["profile"] as? [String: Any]
        #expect(profile?["avatar_url"] is NSNull)
    }
}
