import ArgumentParser
import Foundation
import PostsServer

/// `posts-server role EMAIL ROLE`: names moderators and admins (API.md "Safety").
struct Role: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Give a user a role: moderator, admin, or user (which takes one away).",
        discussion: "The address must belong to an account. Prints the change; exit 1 when there is no such user.")

    @OptionGroup var options: SharedOptions
    @Argument(help: "The user's email address.") var email: String
    @Argument(help: "moderator, admin or user.") var role: String

    func validate() throws {
        guard Roles.names.contains(role) else { throw ValidationError("ROLE must be user, moderator or admin, not \"\(role)\"") }
    }

    func run() throws {
        let (_, directURL) = try options.resolveRequiringDatabase(for: "role")
        guard let change = try Roles.grant(role, toEmail: email, conninfo: directURL) else {
            FileHandle.standardError.write(Data("posts-server role: no user has the address \(email)\n".utf8))
            throw ExitCode(1)
        }
        print("\(email): \(change.previous) -> \(change.now)")
    }
}
