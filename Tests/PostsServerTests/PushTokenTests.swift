import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// `PUT` and `DELETE /api/me/push-tokens` (API.md "Push"): the answer, the refusals, and
/// the 20 tokens a user keeps.
@Suite struct PushTokenTests {
    @Test func register_answersTheStoredToken_andAgainUpdatesItsDevice() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let first = try ash.pushToken("webpush", #"{"endpoint":"https://push.example/x","keys":{"p256dh":"k"}}"#, device: "firefox")
        #expect(first.status == 200, "\(first.text)")
        #expect(first.json["status"] as? String == "success")
        let token = try #require(first.json["push_token"] as? [String: Any])
        #expect(Set(token.keys) == ["platform", "token", "device_id", "created_at"])
        #expect(token["platform"] as? String == "webpush" && token["device_id"] as? String == "firefox")
        #expect(token["token"] as? String == #"{"endpoint":"https://push.example/x","keys":{"p256dh":"k"}}"#)
        #expect((token["created_at"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        let again = try ash.pushToken("webpush", #"{"endpoint":"https://push.example/x","keys":{"p256dh":"k"}}"#)
        #expect(again.status == 200)
        #expect((again.json["push_token"] as? [String: Any])?["device_id"] is NSNull)
        #expect(try PushTestSupport.count("push_tokens", in: app) == 1)
    }

    @Test func refusals_sayWhy() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let invalid: [[String: Any?]] = [
            ["platform": "sms", "token": "t"], ["token": "t"], ["platform": "apns"], ["platform": "apns", "token": ""],
            ["platform": "apns", "token": " \t "], ["platform": "apns", "token": String(repeating: "a", count: 4097)],
            ["platform": "apns", "token": "ab\ncd"], ["platform": "apns", "token": "ab\u{7F}cd"],
            ["platform": "fcm", "token": "ab\u{85}cd"], ["platform": "fcm", "token": "t", "device_id": String(repeating: "d", count: 201)],
            ["platform": "fcm", "token": "t", "device_id": "a\rb"], ["platform": "APNS", "token": "t"],
        ]
        for method in ["PUT", "DELETE"] {
            for fields in invalid {
                let answer = try ash.send(method, "/api/me/push-tokens", json: fields)
                #expect(answer.status == 422, "\(method) \(fields)")
                #expect(answer.json["error"] as? String == "validation_failed")
            }
            for body in ["{", "[]", #"{"platform":"apns","token":12}"#, #"{"platform":["apns"],"token":"t"}"#] {
                let answer = try ash.send(method, "/api/me/push-tokens", body: Array(body.utf8), contentType: "application/json")
                #expect(answer.status == 400, "\(method) \(body)")
                #expect(answer.json["error"] as? String == "bad_request")
            }
            #expect(try APIClient(port: app.server.port).pushToken("apns", "t", method: method).status == 401)
        }
        // At the limits: accepted.
        #expect(try ash.pushToken("apns", String(repeating: "é", count: 2048), device: String(repeating: "é", count: 200)).status == 200)
        #expect(try PushTestSupport.count("push_tokens", in: app) == 1)
    }

    @Test func aTwentyFirstToken_dropsTheLeastRecentlyRegistered() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.pushToken("apns", "blairs").status == 200)
        for index in 0..<20 { #expect(try ash.pushToken("fcm", "token-\(index)").status == 200) }
        // Registered again, token-0 is the most recent: token-1 is the one to go.
        #expect(try ash.pushToken("fcm", "token-0").status == 200)
        #expect(try ash.pushToken("apns", "token-20").status == 200)
        let kept: [String] = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT token FROM push_tokens WHERE user_id = (SELECT id FROM users WHERE email = 'ash@example.com') ORDER BY token
                """).rows.map { try $0.decode("token") }
        }
        #expect(kept.count == 20)
        #expect(!kept.contains("token-1") && kept.contains("token-0") && kept.contains("token-20"))
        #expect(try PushTestSupport.count("push_tokens", in: app) == 21)
    }
}
